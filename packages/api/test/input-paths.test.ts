import request from 'supertest';
import { startApiHarness, type ApiHarness } from './harness';

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness();
});
afterAll(() => h.close());

const putFile = (rawPath: string, body = 'x') =>
  request(h.publicApp)
    .put(`/api/v1/namespaces/paths/files/${rawPath}`)
    .set('Authorization', `Bearer ${h.adminToken}`)
    .set('Content-Type', 'application/octet-stream')
    .send(Buffer.from(body));

const listStored = async (): Promise<string[]> => {
  const rows = await h.pool.query<{ path: string }>(
    "SELECT path FROM namespace_files WHERE namespace = 'paths' ORDER BY path",
  );
  return rows.rows.map((r) => r.path);
};

describe('namespace file paths are checked after percent-decoding', () => {
  it.each([
    ['..%2Fx', 'invalid_path'],
    ['a%2F..%2F..%2Fx', 'invalid_path'],
    ['%2Fetc%2Fpasswd', 'invalid_path'],
    ['a%00b', 'invalid_path'],
    ['a%0Ab', 'invalid_path'],
    ['a%5Cb', 'invalid_path'],
    [`${'a'.repeat(256)}`, 'invalid_path'],
  ])('refuses %s with 400 %s and stores nothing', async (rawPath, code) => {
    const res = await putFile(rawPath);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(code);
    expect(await listStored()).toEqual([]);
  });

  it('stores a plain nested path', async () => {
    const res = await putFile('scripts/etl/load.sh', 'echo hi');
    expect(res.status).toBe(200);
    expect(await listStored()).toEqual(['scripts/etl/load.sh']);
  });

  it('refuses a namespace name that decodes to a traversal', async () => {
    const res = await request(h.publicApp)
      .put('/api/v1/namespaces/..%2Fother/files/x.sh')
      .set('Authorization', `Bearer ${h.adminToken}`)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('x'));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_name');
  });
});
