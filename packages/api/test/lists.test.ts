import { startApiHarness, type ApiHarness } from './harness';
import { A, B, caller, flowYaml, tokenOf, type Caller } from './workspaces';

// The lists of the public API (docs/api.md#pagination): newest first, pages
// of `limit` continued by an opaque `cursor`, inside the caller's workspace.

let h: ApiHarness;
let a: Caller;
let b: Caller;

beforeAll(async () => {
  h = await startApiHarness();
  a = caller(h.publicApp, await tokenOf(A, 'member'));
  b = caller(h.publicApp, await tokenOf(B, 'member'));
  for (const [who, ns, flow] of [
    [a, 'etl', 'daily'],
    [a, 'etl', 'hourly'],
    [a, 'ops', 'daily'],
    [b, 'etl', 'daily'],
  ] as const)
    expect((await who.putYaml(`/api/v1/namespaces/${ns}/flows/${flow}`, flowYaml(flow))).status).toBe(200);
});
afterAll(() => h.close());

const start = async (who: Caller, ns: string, flow: string): Promise<string> => {
  const res = await who.post(`/api/v1/namespaces/${ns}/flows/${flow}/executions`);
  expect(res.status).toBe(201);
  return String(res.body.id);
};

type Summary = {
  id: string;
  namespace: string;
  flowId: string;
  state: string;
  createdAt: string;
  workspace: string;
};

/** Every page of `GET /executions?<query>`, calling `between` after each page. */
async function everyPage(who: Caller, query: string, between: () => Promise<unknown> = async () => {}) {
  const pages: Summary[][] = [];
  let cursor: string | null = null;
  do {
    const res = await who.get(`/api/v1/executions?${query}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    pages.push(res.body.executions as Summary[]);
    cursor = res.body.nextCursor as string | null;
    await between();
  } while (cursor !== null);
  return pages;
}

describe('GET /api/v1/executions', () => {
  const created: string[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 4; i++) created.push(await start(a, 'etl', 'daily'));
    for (let i = 0; i < 3; i++) created.push(await start(a, 'etl', 'hourly'));
    for (let i = 0; i < 2; i++) created.push(await start(a, 'ops', 'daily'));
    await start(b, 'etl', 'daily');
  });

  it('returns every execution exactly once, newest first, while new ones start between pages', async () => {
    const during: string[] = [];
    const pages = await everyPage(a, 'limit=2', async () => during.push(await start(a, 'etl', 'daily')));
    expect(pages.slice(0, -1).every((p) => p.length === 2)).toBe(true);
    const listed = pages.flat();
    const ids = listed.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...created].sort());
    const order = listed.map((e) => [e.createdAt, e.id].join(' '));
    expect(order).toEqual([...order].sort().reverse());
    // What started while paging is at the head of the next listing.
    const fresh = await a.get(`/api/v1/executions?limit=${during.length}`);
    expect((fresh.body.executions as Summary[]).map((e) => e.id).sort()).toEqual([...during].sort());
    created.push(...during);
  });

  it('filters by namespace, flow, state and creation time', async () => {
    const of = async (query: string) => (await everyPage(a, `limit=500&${query}`)).flat();
    expect((await of('namespace=ops')).map((e) => e.namespace)).toEqual(['ops', 'ops']);
    expect((await of('namespace=etl&flow=hourly')).map((e) => e.flowId)).toEqual([
      'hourly',
      'hourly',
      'hourly',
    ]);
    expect(await of('state=SUCCEEDED')).toEqual([]);
    expect((await of('state=RUNNING')).length).toBe(created.length);
    const all = await of('');
    const middle = all[Math.floor(all.length / 2)]!;
    const after = await of(`createdAfter=${middle.createdAt}`);
    const before = await of(`createdBefore=${middle.createdAt}`);
    expect(after.length + before.length).toBe(all.length);
    expect(after.every((e) => e.createdAt >= middle.createdAt)).toBe(true);
    expect(before.every((e) => e.createdAt < middle.createdAt)).toBe(true);
  });

  it("never lists another workspace's executions", async () => {
    const ofB = (await everyPage(b, 'limit=1')).flat();
    expect(ofB.map((e) => e.workspace)).toEqual([B]);
    for (const e of ofB) expect(created).not.toContain(e.id);
  });

  it.each([
    ['a cursor that is not base64 JSON', 'cursor=!!!', 'invalid_cursor'],
    ['a cursor of another shape', `cursor=${Buffer.from('["x"]').toString('base64url')}`, 'invalid_cursor'],
    [
      'a cursor with a bad time',
      `cursor=${Buffer.from('["yesterday","x"]').toString('base64url')}`,
      'invalid_cursor',
    ],
    ['limit 0', 'limit=0', 'invalid_request'],
    ['limit over 500', 'limit=501', 'invalid_request'],
    ['an unknown state', 'state=DONE', 'invalid_request'],
    ['a flow without its namespace', 'flow=daily', 'invalid_request'],
    ['an unknown parameter', 'namespaces=etl', 'invalid_request'],
    ['a time that is not ISO 8601', 'createdAfter=yesterday', 'invalid_request'],
    ['a namespace outside the naming rules', 'namespace=a..b', 'invalid_name'],
  ])('refuses %s with 400', async (_what, query, code) => {
    const res = await a.get(`/api/v1/executions?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(code);
  });

  it('lists 50 by default', async () => {
    for (let i = 0; i < 45; i++) await start(a, 'ops', 'daily');
    const res = await a.get('/api/v1/executions');
    expect(res.body.executions).toHaveLength(50);
    expect(res.body.nextCursor).toEqual(expect.any(String));
  });
});

describe('the lists of namespaces, flows and files', () => {
  const pagesOf = async (who: Caller, path: string, key: string, item: string) => {
    const seen: unknown[] = [];
    let cursor: string | null = null;
    do {
      const res = await who.get(`${path}?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...(res.body[key] as Array<Record<string, unknown>>).map((x) => x[item]));
      cursor = res.body.nextCursor as string | null;
    } while (cursor !== null);
    return seen;
  };

  it('pages through each by name', async () => {
    for (const path of ['b.txt', 'a/x.txt', 'c.txt'])
      expect((await a.putFile(`/api/v1/namespaces/etl/files/${path}`, path)).status).toBe(200);
    expect(await pagesOf(a, '/api/v1/namespaces', 'namespaces', 'name')).toEqual(['etl', 'ops']);
    expect(await pagesOf(a, '/api/v1/namespaces/etl/flows', 'flows', 'id')).toEqual(['daily', 'hourly']);
    expect(await pagesOf(a, '/api/v1/namespaces/etl/files', 'files', 'path')).toEqual([
      'a/x.txt',
      'b.txt',
      'c.txt',
    ]);
    expect(await pagesOf(b, '/api/v1/namespaces', 'namespaces', 'name')).toEqual(['etl']);
    expect(await pagesOf(b, '/api/v1/namespaces/etl/files', 'files', 'path')).toEqual([]);
    const bad = await a.get('/api/v1/namespaces/etl/flows?cursor=%5B1%5D');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_cursor');
  });

  it('GET /executions/{id}/task-runs lists the task runs of one execution', async () => {
    const id = await start(a, 'etl', 'daily');
    const res = await a.get(`/api/v1/executions/${id}/task-runs`);
    expect(res.status).toBe(200);
    expect(res.body.taskRuns).toMatchObject([{ taskId: 'a', attempt: 1, state: 'QUEUED' }]);
    expect(res.body.taskRuns).toEqual((await a.get(`/api/v1/executions/${id}`)).body.taskRuns);
  });
});
