import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InlineExecutor, type ExecutorContext } from '../src';
import { InMemoryExecutorProtocol, claimedRun, eventually, recordingLogger } from '@sluice/testing';

interface Received {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
}

describe('InlineExecutor', () => {
  let server: Server;
  let base: string;
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  let protocol: InMemoryExecutorProtocol;
  let ctx: ExecutorContext;

  beforeAll(async () => {
    server = createServer((req, res) => void route(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    hanging.forEach((res) => res.destroy());
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    received.length = 0;
    protocol = new InMemoryExecutorProtocol({ unknownTaskRuns: 'accept' });
    ctx = { protocol, runnerApiUrl: 'unused', log: recordingLogger() };
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    received.push({
      method: req.method ?? '',
      url: req.url ?? '',
      contentType: req.headers['content-type'],
      body,
    });
    const path = (req.url ?? '').split('?')[0];
    if (path === '/echo') {
      res.writeHead(201, { 'content-type': 'application/json; charset=utf-8' });
      res.end(
        JSON.stringify({
          id: 'r-7',
          count: 7,
          ok: true,
          missing: null,
          nested: { a: 1 },
          list: [1],
        }),
      );
    } else if (path === '/fail') {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('boom');
    } else if (path === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('é'.repeat(40_000)); // 80,000 bytes of two-byte characters
    } else {
      hanging.push(res); // /hang: never answers
    }
  }

  const httpRun = (request: Record<string, unknown>, timeoutMs = 60_000) =>
    claimedRun({
      executor: { type: 'inline', pool: 'default' },
      task: { type: 'http', request },
      timeoutMs,
    });

  async function runToEnd(executor: InlineExecutor, run: ReturnType<typeof httpRun>) {
    const handle = await executor.start(run, ctx);
    return executor.wait(handle);
  }

  it('sends the request and completes SUCCEEDED with status, body and flattened JSON outputs', async () => {
    const run = httpRun({
      method: 'post',
      url: `${base}/echo?token=s3cret`,
      body: { rows: '42' },
      expected_status: [200, 201],
    });
    const outcome = await runToEnd(new InlineExecutor(), run);

    expect(outcome.completed).toBe(true);
    expect(received).toEqual([
      {
        method: 'POST',
        url: '/echo?token=s3cret',
        contentType: 'application/json',
        body: '{"rows":"42"}',
      },
    ]);
    const [completion] = protocol.completions;
    expect(completion).toMatchObject({
      taskRunId: run.taskRunId,
      fence: run.fence,
      state: 'SUCCEEDED',
    });
    expect(completion?.outputs).toEqual({
      status: '201',
      body: '{"id":"r-7","count":7,"ok":true,"missing":null,"nested":{"a":1},"list":[1]}',
      'json.id': 'r-7',
      'json.count': '7',
      'json.ok': 'true',
      'json.missing': 'null',
    });
    const lines = protocol.logLines(run.taskRunId);
    expect(lines[0]).toBe(`POST ${base}/echo?…`);
    expect(lines[1]).toMatch(/^response 201 in \d+ ms$/);
    expect(lines.join('\n')).not.toContain('s3cret');
    expect(protocol.logs.flatMap((b) => b.lines.map((l) => l.seq))).toEqual([1, 2]);
  });

  it('sends a string body as it is', async () => {
    await runToEnd(new InlineExecutor(), httpRun({ method: 'PUT', url: `${base}/echo`, body: 'a=1&b=2' }));
    expect(received[0]).toMatchObject({ method: 'PUT', body: 'a=1&b=2' });
    expect(received[0]?.contentType).not.toBe('application/json');
    expect(protocol.completions[0]?.state).toBe('SUCCEEDED');
  });

  it('fails with the expected and the actual status when they differ', async () => {
    const run = httpRun({ url: `${base}/fail`, expected_status: 200 });
    await runToEnd(new InlineExecutor(), run);

    expect(protocol.completions[0]).toMatchObject({
      state: 'FAILED',
      reason: 'error',
      error: 'expected status 200, got 500',
      outputs: { status: '500', body: 'boom' },
    });
    expect(protocol.logLines(run.taskRunId)).toContain('expected status 200, got 500');
  });

  it('fails a non-2xx answer when no status is expected explicitly', async () => {
    await runToEnd(new InlineExecutor(), httpRun({ url: `${base}/fail` }));
    expect(protocol.completions[0]).toMatchObject({
      state: 'FAILED',
      error: 'expected a 2xx status, got 500',
    });
  });

  it('cuts a large body output at 64 KiB on a character boundary', async () => {
    await runToEnd(new InlineExecutor(), httpRun({ url: `${base}/big` }));
    const body = protocol.completions[0]?.outputs?.body ?? '';
    expect(Buffer.byteLength(body)).toBe(64 * 1024);
    expect(body).toBe('é'.repeat(32 * 1024));
  });

  it('fails with reason timeout when the answer takes longer than the task timeout', async () => {
    await runToEnd(new InlineExecutor(), httpRun({ url: `${base}/hang` }, 300));
    expect(protocol.completions[0]).toMatchObject({
      state: 'FAILED',
      reason: 'timeout',
      error: 'request timed out after 300 ms',
    });
  });

  it('aborts the request and completes CANCELLED on cancel', async () => {
    const executor = new InlineExecutor();
    const handle = await executor.start(httpRun({ url: `${base}/hang` }), ctx);
    const outcome = executor.wait(handle);
    await eventually('the request to arrive', () => received.length === 1);
    expect(await executor.status(handle)).toBe('running');

    await executor.cancel(handle);

    expect((await outcome).completed).toBe(true);
    expect(protocol.completions[0]).toMatchObject({
      state: 'CANCELLED',
      reason: 'cancelled',
    });
  });

  it('heartbeats its task runs and stops one whose heartbeat answer asks for a cancel', async () => {
    protocol.cancelOnHeartbeat = true;
    const executor = new InlineExecutor({ heartbeatIntervalMs: 50 });
    await runToEnd(executor, httpRun({ url: `${base}/hang` }));
    expect(protocol.heartbeats.length).toBeGreaterThan(0);
    expect(protocol.completions[0]).toMatchObject({
      state: 'CANCELLED',
      reason: 'cancelled',
    });
  });

  it('fails a task run with a clear error when the server cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    await runToEnd(new InlineExecutor(), httpRun({ url: `http://127.0.0.1:${port}/` }));
    expect(protocol.completions[0]).toMatchObject({
      state: 'FAILED',
      reason: 'error',
    });
    expect(protocol.completions[0]?.error).toMatch(/^request failed: .*ECONNREFUSED/);
  });

  it('fails an invalid request naming the field at fault', async () => {
    await runToEnd(new InlineExecutor(), httpRun({ url: `${base}/echo`, expected_status: 'ok' }));
    expect(protocol.completions[0]).toMatchObject({
      state: 'FAILED',
      reason: 'error',
      error: 'task.request.expected_status must be an HTTP status code or a list of them',
    });
    expect(received).toHaveLength(0);
  });

  it('starts a waiting subflow and leaves the task run parked for the child to complete', async () => {
    const run = claimedRun({
      executor: { type: 'inline', pool: '' },
      task: { type: 'subflow', flow: 'child', inputs: { n: 1 }, wait: true },
    });
    const outcome = await runToEnd(new InlineExecutor(), run);
    expect(protocol.subflows).toEqual([
      { taskRunId: run.taskRunId, fence: run.fence, flow: 'child', inputs: { n: 1 }, wait: true },
    ]);
    expect(protocol.completions).toHaveLength(0);
    expect(outcome).toMatchObject({ completed: true });
    expect(protocol.logLines(run.taskRunId).join('\n')).toContain('waiting for it');
  });

  it('completes a subflow that does not wait with the child execution id', async () => {
    const run = claimedRun({
      executor: { type: 'inline', pool: '' },
      task: { type: 'subflow', flow: 'other/child', wait: false },
    });
    await runToEnd(new InlineExecutor(), run);
    expect(protocol.completions[0]).toMatchObject({
      state: 'SUCCEEDED',
      outputs: { executionId: `child-of-${run.taskRunId}` },
    });
  });

  it('ends its task runs with instance_shutdown on shutdown', async () => {
    const executor = new InlineExecutor();
    const handle = await executor.start(httpRun({ url: `${base}/hang` }), ctx);
    const outcome = executor.wait(handle);
    await eventually('the request to arrive', () => received.length === 1);

    await executor.shutdown();

    expect((await outcome).completed).toBe(true);
    expect(protocol.completions[0]).toMatchObject({
      state: 'FAILED',
      reason: 'instance_shutdown',
    });
  });
});
