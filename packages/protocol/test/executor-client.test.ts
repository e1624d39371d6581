import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ExecutorApiAuthError,
  ExecutorApiClient,
  ExecutorApiError,
  executorPaths,
  IDEMPOTENCY_KEY_HEADER,
  INTERNAL_SECRET_HEADER,
  StaleFenceError,
  type ClaimedTaskRun,
} from '@sluice/protocol';

const TOKEN = 'internal-secret-4d1e0b8c';
const RUN = randomUUID();

interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}
/** A scripted reply per path; the last one repeats. `destroy` drops the connection without an answer. */
type Reply = { status: number; json?: unknown; destroy?: boolean };

let server: Server;
let baseUrl: string;
let received: Received[];
let replies: Map<string, Reply[]>;
const script = (path: string, ...list: Reply[]) => replies.set(path, list);

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({ method: req.method ?? '', path, headers: req.headers, body });
      const list = replies.get(path) ?? [
        { status: 404, json: { error: { code: 'not_found', message: 'no route' } } },
      ];
      const reply = list.length > 1 ? list.shift()! : list[0]!;
      if (reply.destroy) return void req.socket.destroy();
      res
        .writeHead(reply.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(reply.json ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  received = [];
  replies = new Map();
});

const client = (url = baseUrl) =>
  new ExecutorApiClient({
    baseUrl: `${url}/`,
    token: TOKEN,
    retry: { maxElapsedMs: 1_000, initialDelayMs: 10, maxDelayMs: 50 },
    waitForWorkRetryPauseMs: 10,
  });

const claimed: ClaimedTaskRun = {
  taskRunId: RUN,
  executionId: randomUUID(),
  taskId: 'fetch',
  attempt: 1,
  fence: 4,
  executor: { type: 'docker', pool: 'default', image: 'alpine:3' },
  timeoutMs: 60_000,
  task: { type: 'command', command: ['true'] },
  runToken: 'run-token',
};
const claimRequest = {
  instanceId: 'exec-1',
  executorTypes: ['docker' as const],
  pools: ['default'],
  limit: 2,
};
const unavailable = { status: 503, json: { error: { code: 'unavailable', message: 'restarting' } } };

test('every call carries the internal secret; answers are validated', async () => {
  script(executorPaths.heartbeat(RUN), { status: 200, json: { cancel: true } });
  await expect(client().heartbeat({ taskRunId: RUN, fence: 4 })).resolves.toEqual({ cancel: true });
  expect(received[0]!.headers[INTERNAL_SECRET_HEADER]).toBe(TOKEN);
  expect(JSON.parse(received[0]!.body)).toEqual({ taskRunId: RUN, fence: 4 });

  script(executorPaths.running(RUN), { status: 200, json: { running: 'yes' } });
  await expect(client().isStillRunning(RUN)).rejects.toMatchObject({ code: 'invalid_response' });
});

test('503 and a dropped connection are retried until the call succeeds', async () => {
  script(
    executorPaths.register(),
    unavailable,
    { status: 0, destroy: true },
    { status: 200, json: { ok: true } },
  );
  await client().register({
    instanceId: 'exec-1',
    type: 'docker-executor',
    version: '1',
    capacity: { docker: 5 },
    pools: ['default'],
    executors: ['docker'],
  });
  expect(received).toHaveLength(3);
});

test('the retries of one claim carry the same Idempotency-Key; the next claim a new one', async () => {
  script(executorPaths.claim(), unavailable, { status: 200, json: { taskRuns: [claimed] } });
  const c = client();
  expect(await c.claim(claimRequest)).toEqual([claimed]);
  expect(await c.claim(claimRequest)).toEqual([claimed]);
  const keys = received.map((r) => r.headers[IDEMPOTENCY_KEY_HEADER]);
  expect(keys).toHaveLength(3);
  expect(keys[0]).toBeTruthy();
  expect(keys[1]).toBe(keys[0]);
  expect(keys[2]).not.toBe(keys[0]);
});

test('401 is not retried, and the message points at the variables without their values', async () => {
  script(executorPaths.claim(), { status: 401, json: { error: { code: 'unauthorized', message: 'wrong' } } });
  const error = await client()
    .claim(claimRequest)
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ExecutorApiAuthError);
  expect((error as Error).message).toMatch(/EXECUTOR_API_TOKEN/);
  expect((error as Error).message).toMatch(/PIPELINE_EXECUTOR_API_TOKEN/);
  expect((error as Error).message).not.toContain(TOKEN);
  expect(received).toHaveLength(1);
});

test('409 on a fenced write is a StaleFenceError; another 4xx is final with its status and code', async () => {
  script(executorPaths.complete(RUN), {
    status: 409,
    json: { error: { code: 'stale_fence', message: 'x' } },
  });
  await expect(client().complete({ taskRunId: RUN, fence: 4, state: 'SUCCEEDED' })).rejects.toBeInstanceOf(
    StaleFenceError,
  );
  script(executorPaths.logs(RUN), { status: 404, json: { error: { code: 'not_found', message: 'gone' } } });
  const error = await client()
    .reportLogs({ taskRunId: RUN, fence: 4, lines: [] })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ExecutorApiError);
  expect(error).toMatchObject({ call: 'reportLogs', status: 404, code: 'not_found' });
  expect(received).toHaveLength(2);
});

test('a server that stays down makes the call give up, naming the call and the status', async () => {
  script(executorPaths.cancelRequested(), { status: 502 });
  const error = await client()
    .cancelRequested([RUN])
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ExecutorApiError);
  expect(error).toMatchObject({ call: 'cancelRequested', status: 502 });
  expect((error as Error).message).toMatch(/gave up after \d+ attempts/);
  expect(received.length).toBeGreaterThan(1);
});

test('waitForWork answers the server, false when the server fails or is unreachable, and throws on 401', async () => {
  script(executorPaths.waitForWork(500), { status: 200, json: { queued: true } });
  await expect(client().waitForWork(500)).resolves.toBe(true);

  script(executorPaths.waitForWork(10), unavailable);
  await expect(client().waitForWork(10)).resolves.toBe(false);
  expect(received).toHaveLength(2);

  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  await expect(client(`http://127.0.0.1:${port}`).waitForWork(10)).resolves.toBe(false);

  script(executorPaths.waitForWork(10), {
    status: 401,
    json: { error: { code: 'unauthorized', message: 'no' } },
  });
  await expect(client().waitForWork(10)).rejects.toBeInstanceOf(ExecutorApiAuthError);
});
