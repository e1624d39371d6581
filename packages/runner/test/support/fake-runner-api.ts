import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import {
  FENCE_HEADER,
  HeartbeatRequest,
  LogBatchRequest,
  LogLine,
  Metric,
  MetricsRequest,
  OutputsRequest,
  ResultRequest,
  RunnerTaskSpec,
  RUNNER_API_PREFIX,
  StartedRequest,
} from '@sluice/protocol';

/**
 * A runner API server for tests, faithful to the protocol schemas: every
 * request is validated with them (a request that does not parse is answered
 * 400 and recorded in `problems`), the run token and the fence are checked,
 * and log lines are de-duplicated by seq as the real server does.
 */
export class FakeRunnerApi {
  readonly token = 'test-run-token-7f3a';
  spec: RunnerTaskSpec;
  snapshot: Buffer | null = null;
  /** Heartbeat answer. */
  cancel = false;
  /** Answer 409 to heartbeats from now on (someone else took the task run). */
  staleFence = false;
  /** Answer 401 to everything. */
  rejectToken = false;
  /** The next N log batches are answered 500 (after being recorded in `logBatches`). */
  failLogBatches = 0;
  /** Each log batch is answered after this long: a slow server. */
  logDelayMs = 0;

  readonly problems: string[] = [];
  /** Every log batch as it arrived, failed ones included. */
  readonly logBatches: { status: number; lines: LogLine[] }[] = [];
  private readonly storedLines = new Map<number, LogLine>();
  startedPid: number | undefined | null = null;
  outputs: Record<string, string> = {};
  metrics: Metric[] = [];
  readonly artifacts = new Map<string, Buffer>();
  heartbeats = 0;
  result: ResultRequest | null = null;

  private server: Server | null = null;
  url = '';

  constructor(spec: RunnerTaskSpec) {
    this.spec = spec;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: Error) => {
        this.problems.push(`handler crashed: ${error.message}`);
        send(res, 500, { error: { code: 'internal', message: 'fake server crashed' } });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** Log lines as the server keeps them: first copy of each seq, in seq order. */
  lines(): LogLine[] {
    return [...this.storedLines.values()].sort((a, b) => a.seq - b.seq);
  }

  text(stream: LogLine['stream']): string[] {
    return this.lines()
      .filter((l) => l.stream === stream)
      .map((l) => l.line);
  }

  async waitFor(what: string, predicate: () => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (this.rejectToken || req.headers.authorization !== `Bearer ${this.token}`) {
      return send(res, 401, { error: { code: 'unauthorized', message: 'run token rejected' } });
    }
    const prefix = `${RUNNER_API_PREFIX}/task-runs/${this.spec.taskRunId}/`;
    const url = req.url ?? '';
    if (!url.startsWith(prefix)) return send(res, 404, { error: { code: 'not_found', message: url } });
    const route = `${req.method} ${url.slice(prefix.length).replace(/^artifacts\/.*/, 'artifacts/*')}`;

    switch (route) {
      case 'GET spec':
        return send(res, 200, RunnerTaskSpec.parse(this.spec));
      case 'GET snapshot':
        if (!this.snapshot) return send(res, 404, { error: { code: 'not_found', message: 'no snapshot' } });
        res.writeHead(200, { 'content-type': 'application/gzip' }).end(this.snapshot);
        return;
      case 'POST started': {
        const request = this.parse(res, StartedRequest, body);
        if (!request || !this.fenceOk(res, request.fence)) return;
        this.startedPid = request.pid;
        return send(res, 200, { ok: true });
      }
      case 'POST logs': {
        const request = this.parse(res, LogBatchRequest, body);
        if (!request || !this.fenceOk(res, request.fence)) return;
        if (this.logDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.logDelayMs));
        if (this.failLogBatches > 0) {
          this.failLogBatches--;
          this.logBatches.push({ status: 500, lines: request.lines });
          return send(res, 500, { error: { code: 'internal', message: 'injected failure' } });
        }
        this.logBatches.push({ status: 200, lines: request.lines });
        for (const line of request.lines)
          if (!this.storedLines.has(line.seq)) this.storedLines.set(line.seq, line);
        return send(res, 200, { accepted: request.lines.length });
      }
      case 'POST outputs': {
        const request = this.parse(res, OutputsRequest, body);
        if (!request || !this.fenceOk(res, request.fence)) return;
        Object.assign(this.outputs, request.outputs);
        return send(res, 200, { ok: true });
      }
      case 'POST metrics': {
        const request = this.parse(res, MetricsRequest, body);
        if (!request || !this.fenceOk(res, request.fence)) return;
        this.metrics.push(...request.metrics);
        return send(res, 200, { ok: true });
      }
      case 'PUT artifacts/*': {
        if (!this.fenceOk(res, Number(req.headers[FENCE_HEADER]))) return;
        if (Number(req.headers['content-length']) !== body.length) {
          this.problems.push(`artifact ${url}: content-length does not match the body`);
        }
        this.artifacts.set(decodeURIComponent(url.slice(prefix.length + 'artifacts/'.length)), body);
        return send(res, 200, { ok: true });
      }
      case 'POST heartbeat': {
        const request = this.parse(res, HeartbeatRequest, body);
        if (!request) return;
        this.heartbeats++;
        if (this.staleFence) return send(res, 409, { error: { code: 'stale_fence', message: 'stale' } });
        if (!this.fenceOk(res, request.fence)) return;
        return send(res, 200, { cancel: this.cancel });
      }
      case 'POST result': {
        const request = this.parse(res, ResultRequest, body);
        if (!request || !this.fenceOk(res, request.fence)) return;
        if (this.result) this.problems.push('result posted twice');
        this.result = request;
        const state =
          request.stoppedBy === 'cancel' ? 'CANCELLED' : request.exitCode === 0 ? 'SUCCEEDED' : 'FAILED';
        return send(res, 200, { state });
      }
      default:
        return send(res, 404, { error: { code: 'not_found', message: route } });
    }
  }

  private parse<T>(res: ServerResponse, schema: Schema<T>, body: Buffer): T | null {
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      json = undefined;
    }
    const parsed = schema.safeParse(json);
    if (parsed.success) return parsed.data;
    this.problems.push(`invalid body: ${parsed.error.message}`);
    send(res, 400, { error: { code: 'invalid_body', message: 'body does not match the schema' } });
    return null;
  }

  private fenceOk(res: ServerResponse, fence: number): boolean {
    if (fence === this.spec.fence) return true;
    send(res, 409, { error: { code: 'stale_fence', message: `fence ${fence} is stale` } });
    return false;
  }
}

export function taskSpec(overrides: Partial<RunnerTaskSpec> = {}): RunnerTaskSpec {
  return {
    taskRunId: 'tr-test',
    executionId: 'ex-test',
    taskId: 'task',
    attempt: 1,
    fence: 3,
    task: { type: 'command', command: ['true'] },
    env: {},
    timeoutMs: 60_000,
    heartbeatIntervalMs: 100,
    cancelGraceMs: 1_500,
    snapshot: null,
    limits: {
      artifactMaxBytes: 1024,
      artifactsTotalMaxBytes: 4096,
      outputValueMaxBytes: 64,
      logLineMaxBytes: 4096,
    },
    ...overrides,
  };
}

/** The part of a zod schema used here (the runner package does not depend on zod itself). */
interface Schema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { message: string } };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
