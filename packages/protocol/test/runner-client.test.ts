import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import {
  RunnerApiError,
  RunnerClient,
  RunnerTaskSpec,
  type RunnerClientOptions,
  RunTokenRejectedError,
  StaleFenceError,
  FENCE_HEADER,
  runnerPaths,
} from '@sluice/protocol';

const TOKEN = 'run-token-secret-value';
const TASK_RUN = 'tr-1';

const spec: RunnerTaskSpec = {
  taskRunId: TASK_RUN,
  executionId: 'ex-1',
  taskId: 'fetch',
  attempt: 1,
  fence: 7,
  task: { type: 'command', command: ['true'] },
  env: {},
  timeoutMs: 60_000,
  heartbeatIntervalMs: 10_000,
  cancelGraceMs: 10_000,
  snapshot: null,
  limits: {
    artifactMaxBytes: 1024,
    artifactsTotalMaxBytes: 4096,
    outputValueMaxBytes: 256,
    logLineMaxBytes: 1024,
  },
};

interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** Answers each call with the next scripted reply for its path (the last one repeats). */
type Reply = {
  status: number;
  json?: unknown;
  raw?: Buffer;
  /** Close the connection without an answer. */
  destroy?: boolean;
  /** Send the status and half of a JSON body that claims more, then close. */
  cut?: boolean;
  /** Answer only after this long. */
  stallMs?: number;
};

let server: Server;
let baseUrl: string;
let received: Received[];
let replies: Map<string, Reply[]>;

function script(path: string, ...list: Reply[]): void {
  replies.set(path, list);
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks) });
      const list = replies.get(path) ?? [
        { status: 404, json: { error: { code: 'not_found', message: 'no route' } } },
      ];
      const reply = list.length > 1 ? list.shift()! : list[0]!;
      if (reply.stallMs) {
        const timer = setTimeout(() => res.writeHead(reply.status).end('{}'), reply.stallMs);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      if (reply.cut) {
        const body = JSON.stringify(reply.json ?? {});
        res.writeHead(reply.status, {
          'content-type': 'application/json',
          'content-length': String(body.length),
        });
        res.write(body.slice(0, Math.floor(body.length / 2)));
        setTimeout(() => req.socket.destroy(), 20);
        return;
      }
      if (reply.destroy) {
        req.socket.destroy();
        return;
      }
      if (reply.raw) {
        res.writeHead(reply.status, { 'content-type': 'application/gzip' }).end(reply.raw);
        return;
      }
      res
        .writeHead(reply.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(reply.json ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received = [];
  replies = new Map();
});

const fastRetry = { maxElapsedMs: 2_000, initialDelayMs: 10, maxDelayMs: 50 };

/** A client of the test server with quick retries; `overrides` change any option. */
function clientWith(overrides: Partial<RunnerClientOptions>): RunnerClient {
  return new RunnerClient({
    apiUrl: `${baseUrl}/`,
    runToken: TOKEN,
    taskRunId: TASK_RUN,
    retry: fastRetry,
    ...overrides,
  });
}

function client(fence?: number): RunnerClient {
  return clientWith({ fence });
}

test('getSpec sends the run token and later writes carry the fence from the spec', async () => {
  script(runnerPaths.spec(TASK_RUN), { status: 200, json: spec });
  script(runnerPaths.outputs(TASK_RUN), { status: 200, json: { ok: true } });
  const c = client();

  expect((await c.getSpec()).taskId).toBe('fetch');
  await c.sendOutputs({ rows: '42' });

  expect(received[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  expect(JSON.parse(received[1]!.body.toString())).toEqual({ fence: 7, outputs: { rows: '42' } });
});

test('commitState sends the source state, its sequence and counts with the fence; a bad state is refused before sending', async () => {
  script(runnerPaths.syncState(TASK_RUN), { status: 200, json: { committed: true } });
  const c = client(7);
  const message = {
    type: 'STATE' as const,
    state: {
      type: 'STREAM' as const,
      stream: { stream_descriptor: { name: 'users' }, stream_state: { c: 1 } },
    },
  };
  expect(
    await c.commitState({ sequence: 3, message, streams: { users: { records: 2, bytes: 20 } } }),
  ).toEqual({
    committed: true,
  });
  expect(received[0]!.path).toBe('/internal/v1/runner/task-runs/tr-1/sync/state');
  expect(JSON.parse(received[0]!.body.toString())).toEqual({
    fence: 7,
    sequence: 3,
    message,
    streams: { users: { records: 2, bytes: 20 } },
  });
  // A STREAM state without its stream cannot be keyed: refused here, not by the server.
  await expect(
    c.commitState({ sequence: 4, message: { type: 'STATE', state: { type: 'STREAM' } }, streams: {} }),
  ).rejects.toThrow(/stream_descriptor/);
  expect(received).toHaveLength(1);
});

test('a write before the fence is known fails without calling the server', async () => {
  await expect(client().heartbeat()).rejects.toThrow(/heartbeat: the fence is unknown/);
  expect(received).toHaveLength(0);
});

test('5xx, 429 and a dropped connection are retried until an answer arrives', async () => {
  script(
    runnerPaths.heartbeat(TASK_RUN),
    { status: 503, json: { error: { code: 'unavailable', message: 'restarting' } } },
    { status: 0, destroy: true },
    { status: 429 },
    { status: 500 },
    { status: 200, json: { cancel: true } },
  );

  await expect(client(3).heartbeat()).resolves.toEqual({ cancel: true });
  expect(received).toHaveLength(5);
});

test('an answer cut short is retried, never read as a short body', async () => {
  script(runnerPaths.spec(TASK_RUN), { status: 200, json: spec, cut: true }, { status: 200, json: spec });

  await expect(client().getSpec()).resolves.toEqual(spec);
  expect(received).toHaveLength(2);
});

test('a call that gets no answer within its timeout is retried, then reported as timed out', async () => {
  script(runnerPaths.spec(TASK_RUN), { status: 200, stallMs: 5_000 });
  const c = clientWith({
    requestTimeoutMs: 50,
    retry: { maxElapsedMs: 300, initialDelayMs: 10, maxDelayMs: 20 },
  });

  const error = await c.getSpec().catch((e) => e);
  expect(error).toBeInstanceOf(RunnerApiError);
  expect(error.message).toMatch(/^runner API getSpec: no answer \(timed out\); gave up after \d+ attempts/);
  expect(received.length).toBeGreaterThan(1);
});

test("the caller's abort ends a call at once and is not retried", async () => {
  script(runnerPaths.heartbeat(TASK_RUN), { status: 200, stallMs: 5_000 });
  const stop = new AbortController();
  const call = client(3).heartbeat({ signal: stop.signal });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = Date.now();
  stop.abort();

  await expect(call).rejects.toBeTruthy();
  expect(Date.now() - started).toBeLessThan(1_000);
  expect(received).toHaveLength(1);
});

test('a server that stays down makes the call give up naming the call and the status', async () => {
  script(runnerPaths.logs(TASK_RUN), { status: 502 });
  const c = clientWith({ fence: 1, retry: { maxElapsedMs: 200, initialDelayMs: 20, maxDelayMs: 40 } });

  const error = await c
    .sendLogs([{ seq: 1, stream: 'stdout', line: 'x', ts: new Date().toISOString() }])
    .catch((e) => e);
  expect(error).toBeInstanceOf(RunnerApiError);
  expect(error.status).toBe(502);
  expect(error.message).toMatch(/^runner API sendLogs: 502; gave up after \d+ attempts/);
  expect(received.length).toBeGreaterThan(1);
});

test('an unreachable server is reported as no answer', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const c = clientWith({
    apiUrl: `http://127.0.0.1:${port}`,
    retry: { maxElapsedMs: 100, initialDelayMs: 10, maxDelayMs: 20 },
  });

  const error = await c.getSpec().catch((e) => e);
  expect(error).toBeInstanceOf(RunnerApiError);
  expect(error.status).toBeNull();
  expect(error.message).toMatch(/getSpec: no answer \(ECONNREFUSED\)/);
});

test('401 is final and the message does not contain the token', async () => {
  script(runnerPaths.spec(TASK_RUN), {
    status: 401,
    json: { error: { code: 'unauthorized', message: 'bad token' } },
  });

  const error = await client()
    .getSpec()
    .catch((e) => e);
  expect(error).toBeInstanceOf(RunTokenRejectedError);
  expect(error.message).toContain('getSpec');
  expect(error.message).not.toContain(TOKEN);
  expect(received).toHaveLength(1);
});

test('409 is a StaleFenceError and is not retried', async () => {
  script(runnerPaths.heartbeat(TASK_RUN), {
    status: 409,
    json: { error: { code: 'stale_fence', message: 'stale' } },
  });

  await expect(client(4).heartbeat()).rejects.toBeInstanceOf(StaleFenceError);
  expect(received).toHaveLength(1);
});

test('another 4xx is final and carries the status and the error code of the body', async () => {
  script(runnerPaths.result(TASK_RUN), {
    status: 422,
    json: { error: { code: 'invalid_body', message: 'exitCode must be an integer' } },
  });

  const error = await client(1)
    .result({ exitCode: 0 })
    .catch((e) => e);
  expect(error).toBeInstanceOf(RunnerApiError);
  expect(error).toMatchObject({ status: 422, code: 'invalid_body' });
  expect(error.message).toBe('runner API result: 422 invalid_body: exitCode must be an integer');
  expect(received).toHaveLength(1);
});

test('an answer that is not the protocol is an error, not a retry', async () => {
  script(runnerPaths.heartbeat(TASK_RUN), { status: 200, json: { cancel: 'maybe' } });

  await expect(client(1).heartbeat()).rejects.toMatchObject({ code: 'invalid_response', status: 200 });
  expect(received).toHaveLength(1);
});

test('downloadSnapshot returns the bytes, or null when the server has none', async () => {
  const bundle = Buffer.from([0x1f, 0x8b, 1, 2, 3]);
  script(runnerPaths.snapshot(TASK_RUN), { status: 500 }, { status: 200, raw: bundle });
  await expect(client().downloadSnapshot()).resolves.toEqual(bundle);

  script(runnerPaths.snapshot(TASK_RUN), { status: 404 });
  await expect(client().downloadSnapshot()).resolves.toBeNull();
});

test('an artifact from a stream factory is resent whole after a failed attempt', async () => {
  const name = 'reports/daily summary.csv';
  script(runnerPaths.artifact(TASK_RUN, name), { status: 503 }, { status: 200, json: { ok: true } });
  const content = Buffer.from('a,b\n1,2\n');

  await client(9).uploadArtifact(
    name,
    () => Readable.from([content.subarray(0, 3), content.subarray(3)]),
    content.length,
  );

  expect(received).toHaveLength(2);
  const last = received[1]!;
  expect(last.method).toBe('PUT');
  expect(last.path).toBe(`/internal/v1/runner/task-runs/${TASK_RUN}/artifacts/reports%2Fdaily%20summary.csv`);
  expect(last.headers[FENCE_HEADER]).toBe('9');
  expect(last.headers['content-length']).toBe(String(content.length));
  expect(last.body).toEqual(content);
});

test('a one-shot artifact stream is not resent after a failure', async () => {
  script(runnerPaths.artifact(TASK_RUN, 'a.txt'), { status: 503 }, { status: 200, json: { ok: true } });

  const error = await client(1)
    .uploadArtifact('a.txt', Readable.from([Buffer.from('abc')]), 3)
    .catch((e) => e);
  expect(error).toBeInstanceOf(RunnerApiError);
  expect(error.message).toBe(
    'runner API uploadArtifact(a.txt): 503; not retried: the body stream was used up',
  );
  expect(received).toHaveLength(1);
});
