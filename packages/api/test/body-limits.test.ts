import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { getTaskRun, listTaskRunsOfExecution } from '@sluice/store';
import { INTERNAL_SECRET_HEADER } from '@sluice/protocol';
import { EXECUTOR_BODY_LIMITS, RUNNER_BODY_LIMITS } from '../src/body-limits';
import { claimWithToken, listen, putFlow, startApiHarness, WORKSPACE, type ApiHarness } from './harness';

/**
 * issue 12: a request body is read only after its caller is authenticated,
 * and each route reads at most its own limit; over it is 413
 * payload_too_large and nothing is stored.
 */

const MiB = 1024 * 1024;
const EXECUTOR_TOKEN = 'body-limits-executor-token';
const FLOW = ['tasks:', '  - id: a', '    type: command', '    command: ["true"]'].join('\n');

let h: ApiHarness;
let internalUrl: string;
let publicUrl: string;
const servers: Array<{ close(graceMs?: number): Promise<void> }> = [];

beforeAll(async () => {
  h = await startApiHarness({}, { executor: { apiToken: EXECUTOR_TOKEN } });
  const internal = await listen(h.internalApp);
  const pub = await listen(h.publicApp);
  servers.push(internal, pub);
  internalUrl = internal.url;
  publicUrl = pub.url;
  expect((await putFlow(h, 'ns', 'one', FLOW)).status).toBe(200);
});
afterAll(async () => {
  for (const s of servers) await s.close(0);
  await h.close();
});

interface EarlyAnswer {
  status: number;
  body: { error?: { code: string } };
  /** Bytes of the body sent when the answer came. */
  sent: number;
}

/**
 * Announces a 50 MB body, sends its first 64 KiB and then nothing more until
 * an answer comes. A server that reads the body before checking the caller
 * never answers (it waits for the rest), so the test fails on the timeout
 * instead of depending on how fast 50 MB travel.
 */
function answerBeforeTheBody(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<EarlyAnswer> {
  const declared = 50 * MiB;
  const first = Buffer.alloc(64 * 1024, 0x20);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'content-length': String(declared), ...headers },
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(
        new Error(
          `no answer within 10 s with ${first.length} of ${declared} bytes sent: the body is read first`,
        ),
      );
    }, 10_000);
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(text) as EarlyAnswer['body'],
          sent: first.length,
        });
      });
    });
    req.on('error', (error) => {
      // The server may drop the connection once it answered; only an error before the answer counts.
      if (answered) return;
      clearTimeout(timer);
      reject(error);
    });
    req.write(first);
  });
}

describe('an unauthenticated request with a huge body', () => {
  const runner = (what: string) =>
    `/internal/v1/runner/task-runs/00000000-0000-4000-8000-000000000000/${what}`;

  interface Case {
    route: string;
    url: () => string;
    method: string;
    path: string;
    headers: Record<string, string>;
  }

  it.each<Case>([
    {
      route: 'runner logs, no run token',
      url: () => internalUrl,
      method: 'POST',
      path: runner('logs'),
      headers: {},
    },
    {
      route: 'runner logs, a forged run token',
      url: () => internalUrl,
      method: 'POST',
      path: runner('logs'),
      headers: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJ0IjoxfQ.forged' },
    },
    {
      route: 'runner artifact upload, no run token',
      url: () => internalUrl,
      method: 'PUT',
      path: runner('artifacts/big.bin'),
      headers: { 'content-type': 'application/octet-stream' },
    },
    {
      route: 'executor claim, wrong X-Internal-Secret',
      url: () => internalUrl,
      method: 'POST',
      path: '/internal/v1/executor/claim',
      headers: { [INTERNAL_SECRET_HEADER]: 'wrong' },
    },
    {
      route: 'public flow PUT, no user token',
      url: () => publicUrl,
      method: 'PUT',
      path: '/api/v1/namespaces/ns/flows/big',
      headers: { 'content-type': 'application/yaml' },
    },
    {
      route: 'public file PUT, no user token',
      url: () => publicUrl,
      method: 'PUT',
      path: '/api/v1/namespaces/ns/files/big.bin',
      headers: { 'content-type': 'application/octet-stream' },
    },
  ])('$route: 401 before the body is read', async ({ url, method, path, headers }) => {
    const answer = await answerBeforeTheBody(url(), method, path, headers);
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe('unauthorized');
    expect(answer.sent).toBeLessThan(MiB);
  });

  it('a member writing a secret: 403 before the body is read', async () => {
    const answer = await answerBeforeTheBody(publicUrl, 'PUT', '/api/v1/namespaces/ns/secrets/big', {
      authorization: `Bearer ${h.memberToken}`,
    });
    expect(answer.status).toBe(403);
  });
});

describe('an authenticated body over its route limit', () => {
  const tooLarge = { error: { code: 'payload_too_large' } };

  it('runner result and logs: 413, and the task run neither ends nor gets a line', async () => {
    await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'one' });
    const [claimed] = await claimWithToken(h);
    const { row, token } = claimed!;
    const path = (what: string) => `/internal/v1/runner/task-runs/${row.id}/${what}`;

    const result = await request(h.internalApp)
      .post(path('result'))
      .set('Authorization', `Bearer ${token}`)
      .send({ fence: row.fence, exitCode: 0, padding: 'x'.repeat(RUNNER_BODY_LIMITS.result) });
    expect(result.status).toBe(413);
    expect(result.body).toMatchObject(tooLarge);

    const line = 'y'.repeat(16 * 1024);
    const count = Math.ceil(RUNNER_BODY_LIMITS.logs / line.length) + 1;
    const lines = Array.from({ length: count }, (_, i) => ({
      seq: i + 1,
      stream: 'stdout',
      line,
      ts: new Date(),
    }));
    const logs = await request(h.internalApp)
      .post(path('logs'))
      .set('Authorization', `Bearer ${token}`)
      .send({ fence: row.fence, lines });
    expect(logs.status).toBe(413);
    expect(logs.body).toMatchObject(tooLarge);

    expect((await getTaskRun(h.pool, row.id))?.endedAt ?? null).toBeNull();
    const stored = await request(h.publicApp)
      .get(`/api/v1/task-runs/${row.id}/logs`)
      .set('Authorization', `Bearer ${h.adminToken}`);
    expect(stored.status).toBe(200);
    expect(stored.body.lines).toEqual([]);

    // Within the limits the same task run still takes its lines.
    const ok = await request(h.internalApp)
      .post(path('logs'))
      .set('Authorization', `Bearer ${token}`)
      .send({ fence: row.fence, lines: lines.slice(0, 2) });
    expect(ok.status).toBe(200);
  });

  it('public flow over 1 MB and file over 10 MB: 413, and neither is stored', async () => {
    const auth = `Bearer ${h.adminToken}`;
    const flow = await request(h.publicApp)
      .put('/api/v1/namespaces/ns/flows/huge')
      .set('Authorization', auth)
      .set('Content-Type', 'application/yaml')
      .send(`${FLOW}\n# ${'z'.repeat(MiB)}\n`);
    expect(flow.status).toBe(413);
    expect(flow.body).toMatchObject(tooLarge);
    expect(
      (await request(h.publicApp).get('/api/v1/namespaces/ns/flows/huge').set('Authorization', auth)).status,
    ).toBe(404);

    const file = await request(h.publicApp)
      .put('/api/v1/namespaces/ns/files/huge.bin')
      .set('Authorization', auth)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.alloc(10 * MiB + 1, 1));
    expect(file.status).toBe(413);
    expect(file.body).toMatchObject(tooLarge);
    expect(
      (await request(h.publicApp).get('/api/v1/namespaces/ns/files/huge.bin').set('Authorization', auth))
        .status,
    ).toBe(404);
  });

  it('executor claim over its limit: 413, and nothing is claimed', async () => {
    const execution = await h.engine.createExecution({
      workspace: WORKSPACE,
      namespace: 'ns',
      flowId: 'one',
    });
    const claim = await request(h.internalApp)
      .post('/internal/v1/executor/claim')
      .set(INTERNAL_SECRET_HEADER, EXECUTOR_TOKEN)
      .send({
        instanceId: 'big',
        executorTypes: ['process'],
        pools: ['default', 'p'.repeat(EXECUTOR_BODY_LIMITS.small)],
        limit: 10,
      });
    expect(claim.status).toBe(413);
    expect(claim.body).toMatchObject(tooLarge);
    const runs = await listTaskRunsOfExecution(h.pool, execution.id);
    expect(runs.map((r) => r.state)).toEqual(['QUEUED']);
  });
});
