import { Readable } from 'node:stream';
import { z } from 'zod';
import { StaleFenceError } from './executor-protocol';
import {
  isRetryableStatus,
  parseRetryAfter,
  readErrorBody,
  withRetries,
  type AttemptOutcome,
  type RetryableFailure,
  type RetryPolicy,
} from './http-retry';
import { nodeHttpExchange, type HttpAnswer, type HttpExchange } from './http-exchange';
import {
  CommitStateRequest,
  CommitStateResponse,
  FENCE_HEADER,
  HeartbeatResponse,
  LogBatchRequest,
  LogBatchResponse,
  LogLine,
  Metric,
  MetricsRequest,
  OkResponse,
  OutputsRequest,
  ResultRequest,
  ResultResponse,
  RunnerTaskSpec,
  StartedRequest,
  runnerPaths,
} from './runner-api';

/**
 * HTTP client of the runner API, used by `sluice exec` inside a task.
 *
 * Every call retries network errors, 408, 429 and 5xx with exponential backoff
 * and jitter for up to `retry.maxElapsedMs`, so a server restart or a rollout
 * to another replica loses nothing. 401 (run token rejected or revoked), 409
 * (stale fence) and other 4xx answers are final. Error messages name the call
 * and the status, never the token or a request body.
 */

export type RunnerRetryPolicy = RetryPolicy;

export const DEFAULT_RUNNER_RETRY: RunnerRetryPolicy = {
  maxElapsedMs: 120_000,
  initialDelayMs: 250,
  maxDelayMs: 10_000,
};

export interface RunnerClientOptions {
  apiUrl: string;
  runToken: string;
  taskRunId: string;
  /** How requests are sent; default node:http (http-exchange.ts says why not fetch). */
  exchange?: HttpExchange;
  retry?: Partial<RunnerRetryPolicy>;
  /** Per-attempt limit of a JSON call; the snapshot download and uploads get `transferTimeoutMs`. */
  requestTimeoutMs?: number;
  transferTimeoutMs?: number;
  /** Known fence; otherwise it is taken from the spec by `getSpec()`. */
  fence?: number;
}

export interface RunnerCallOptions {
  /** Aborts the call, including its wait between retries. */
  signal?: AbortSignal;
}

/** An artifact body. Give a factory to let a failed upload be resent; a plain stream is sent once. */
export type ArtifactBody = Buffer | Readable | (() => Readable);

/** What the runner reports at the end; the client adds the fence. */
export type ResultInput = Omit<z.input<typeof ResultRequest>, 'fence'>;

/** 401: the run token is wrong, expired or revoked (the task run has ended). */
export class RunTokenRejectedError extends Error {
  readonly code = 'run_token_rejected';
  constructor(readonly call: string) {
    super(`runner API ${call}: 401, the run token was rejected (wrong, expired, or the task run has ended)`);
    this.name = 'RunTokenRejectedError';
  }
}

/** Any other failed call. `status` is null when no answer arrived (network error, timeout). */
export class RunnerApiError extends Error {
  constructor(
    readonly call: string,
    readonly status: number | null,
    readonly code: string | null,
    readonly detail: string,
  ) {
    super(`runner API ${call}: ${detail}`);
    this.name = 'RunnerApiError';
  }
}

interface Attempt<T> {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  /** Builds the body for one attempt; throws `NotResendable` when a one-shot stream was used up. */
  body?: () => { body: string | Buffer | Readable; headers: Record<string, string> };
  timeoutMs: number;
  /** Reads a successful answer (2xx, or 404 when `notFoundIsNull`). */
  read: (res: HttpAnswer) => Promise<T>;
  notFoundIsNull?: boolean;
}

class NotResendable extends Error {}

export class RunnerClient {
  readonly taskRunId: string;
  private readonly apiUrl: string;
  private readonly runToken: string;
  private readonly exchange: HttpExchange;
  private readonly retry: RunnerRetryPolicy;
  private readonly requestTimeoutMs: number;
  private readonly transferTimeoutMs: number;
  private currentFence: number | undefined;

  constructor(options: RunnerClientOptions) {
    this.apiUrl = options.apiUrl.replace(/\/+$/, '');
    this.runToken = options.runToken;
    this.taskRunId = options.taskRunId;
    this.exchange = options.exchange ?? nodeHttpExchange;
    this.retry = { ...DEFAULT_RUNNER_RETRY, ...options.retry };
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.transferTimeoutMs = options.transferTimeoutMs ?? 600_000;
    this.currentFence = options.fence;
  }

  /** The fence every write carries; known after `getSpec()` or when given to the constructor. */
  get fence(): number | undefined {
    return this.currentFence;
  }

  async getSpec(): Promise<RunnerTaskSpec> {
    const spec = await this.request('getSpec', {
      method: 'GET',
      path: runnerPaths.spec(this.taskRunId),
      timeoutMs: this.requestTimeoutMs,
      read: async (res) => RunnerTaskSpec.parse(await res.json()),
    });
    this.currentFence = spec.fence;
    return spec;
  }

  /** The snapshot bundle (tar.gz), read whole so a connection cut mid-body is simply retried. Null on 404. */
  async downloadSnapshot(): Promise<Buffer | null> {
    return this.request('downloadSnapshot', {
      method: 'GET',
      path: runnerPaths.snapshot(this.taskRunId),
      timeoutMs: this.transferTimeoutMs,
      notFoundIsNull: true,
      read: async (res) => (res.status === 404 ? null : Buffer.from(await res.arrayBuffer())),
    });
  }

  async started(pid?: number): Promise<void> {
    await this.postJson('started', runnerPaths.started(this.taskRunId), StartedRequest, { pid }, OkResponse);
  }

  async sendLogs(lines: LogLine[]): Promise<{ accepted: number }> {
    return this.postJson(
      'sendLogs',
      runnerPaths.logs(this.taskRunId),
      LogBatchRequest,
      { lines },
      LogBatchResponse,
    );
  }

  async sendOutputs(outputs: Record<string, string>): Promise<void> {
    await this.postJson(
      'sendOutputs',
      runnerPaths.outputs(this.taskRunId),
      OutputsRequest,
      { outputs },
      OkResponse,
    );
  }

  async sendMetrics(metrics: z.input<typeof Metric>[]): Promise<void> {
    await this.postJson(
      'sendMetrics',
      runnerPaths.metrics(this.taskRunId),
      MetricsRequest,
      { metrics },
      OkResponse,
    );
  }

  /**
   * Commits a state of a sync task (and its ledger row). A retried call whose
   * first attempt landed is answered `committed: false`; 409 means this
   * runner no longer holds the task run and must stop.
   */
  async commitState(
    request: Omit<z.input<typeof CommitStateRequest>, 'fence'>,
  ): Promise<CommitStateResponse> {
    return this.postJson(
      'commitState',
      runnerPaths.syncState(this.taskRunId),
      CommitStateRequest,
      request,
      CommitStateResponse,
    );
  }

  async uploadArtifact(name: string, body: ArtifactBody, size: number): Promise<void> {
    const call = `uploadArtifact(${name})`;
    const fence = this.requireFence(call);
    let oneShotUsed = false;
    await this.request(call, {
      method: 'PUT',
      path: runnerPaths.artifact(this.taskRunId, name),
      timeoutMs: this.transferTimeoutMs,
      body: () => {
        let payload: Buffer | Readable;
        if (Buffer.isBuffer(body)) payload = body;
        else if (typeof body === 'function') payload = body();
        else if (oneShotUsed) throw new NotResendable();
        else payload = body;
        oneShotUsed = true;
        return {
          body: payload,
          headers: {
            'content-type': 'application/octet-stream',
            'content-length': String(size),
            [FENCE_HEADER]: String(fence),
          },
        };
      },
      read: async (res) => OkResponse.parse(await res.json()),
    });
  }

  /** The answer says whether the task run should be cancelled. Throws StaleFenceError when it was taken over. */
  async heartbeat(options: RunnerCallOptions = {}): Promise<HeartbeatResponse> {
    const fence = this.requireFence('heartbeat');
    return this.request(
      'heartbeat',
      {
        method: 'POST',
        path: runnerPaths.heartbeat(this.taskRunId),
        timeoutMs: this.requestTimeoutMs,
        body: () => jsonBody({ fence }),
        read: async (res) => HeartbeatResponse.parse(await res.json()),
      },
      options.signal,
    );
  }

  async result(request: ResultInput): Promise<{ state: string }> {
    return this.postJson(
      'result',
      runnerPaths.result(this.taskRunId),
      ResultRequest,
      request,
      ResultResponse,
    );
  }

  private async postJson<S extends z.ZodType, R extends z.ZodType>(
    call: string,
    path: string,
    requestSchema: S,
    fields: object,
    responseSchema: R,
  ): Promise<z.output<R>> {
    const fence = this.requireFence(call);
    // Validate what we send, so a runner bug surfaces here and not as a 400 from the server.
    const payload = requestSchema.parse({ ...fields, fence });
    return this.request(call, {
      method: 'POST',
      path,
      timeoutMs: this.requestTimeoutMs,
      body: () => jsonBody(payload),
      read: async (res) => responseSchema.parse(await res.json()),
    });
  }

  private requireFence(call: string): number {
    if (this.currentFence === undefined) {
      throw new Error(
        `runner API ${call}: the fence is unknown; call getSpec() first or pass it to RunnerClient`,
      );
    }
    return this.currentFence;
  }

  private request<T>(call: string, attempt: Attempt<T>, signal?: AbortSignal): Promise<T> {
    return withRetries(this.retry, (previous) => this.attemptOnce(call, attempt, signal, previous), {
      signal,
      isFinal: (error) =>
        error instanceof RunnerApiError ||
        error instanceof RunTokenRejectedError ||
        error instanceof StaleFenceError,
      giveUp: (failure, attempts, elapsedMs) =>
        new RunnerApiError(
          call,
          failure.status,
          failure.code,
          `${failure.detail}; gave up after ${attempts} attempts in ${Math.round(elapsedMs / 1000)} s`,
        ),
    });
  }

  /** One HTTP exchange: a value, a retryable failure, or a thrown final error. */
  private async attemptOnce<T>(
    call: string,
    attempt: Attempt<T>,
    signal: AbortSignal | undefined,
    previous: RetryableFailure | null,
  ): Promise<AttemptOutcome<T>> {
    const timeout = AbortSignal.timeout(attempt.timeoutMs);
    let body: ReturnType<NonNullable<Attempt<T>['body']>> | undefined;
    try {
      body = attempt.body?.();
    } catch (error) {
      if (!(error instanceof NotResendable)) throw error;
      const detail = `${previous?.detail ?? 'failed'}; not retried: the body stream was used up`;
      throw new RunnerApiError(call, previous?.status ?? null, previous?.code ?? null, detail);
    }
    const res = await this.exchange(this.apiUrl + attempt.path, {
      method: attempt.method,
      headers: {
        authorization: `Bearer ${this.runToken}`,
        accept: 'application/json',
        'user-agent': 'sluice-runner',
        ...body?.headers,
      },
      body: body?.body,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    if (res.ok || (res.status === 404 && attempt.notFoundIsNull)) {
      try {
        return { done: true, value: await attempt.read(res) };
      } catch (error) {
        if (error instanceof z.ZodError || error instanceof SyntaxError) {
          throw new RunnerApiError(
            call,
            res.status,
            'invalid_response',
            `${res.status} with an answer that is not the runner protocol`,
          );
        }
        throw error;
      }
    }
    const { code, message } = await readErrorBody(res);
    if (res.status === 401) throw new RunTokenRejectedError(call);
    if (res.status === 409) throw new StaleFenceError(this.taskRunId, this.currentFence ?? -1);
    const detail = `${res.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
    if (!isRetryableStatus(res.status)) throw new RunnerApiError(call, res.status, code, detail);
    return {
      done: false,
      failure: {
        status: res.status,
        code,
        detail,
        retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
      },
    };
  }
}

function jsonBody(payload: unknown): { body: string; headers: Record<string, string> } {
  return { body: JSON.stringify(payload), headers: { 'content-type': 'application/json' } };
}
