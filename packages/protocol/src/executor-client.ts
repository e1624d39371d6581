import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  CancelRequestedRequest,
  CancelRequestedResponse,
  ClaimRequest,
  ClaimResponse,
  CompletionRequest,
  CompletionResponse,
  ExecutorLogBatch,
  executorPaths,
  FencedTaskRunRef,
  IDEMPOTENCY_KEY_HEADER,
  InstanceRegistration,
  INTERNAL_SECRET_HEADER,
  MarkStartedRequest,
  StaleFenceError,
  StartSubflowRequest,
  StartSubflowResponse,
  StillRunningResponse,
  WaitForWorkResponse,
  type ClaimedTaskRun,
  type ExecutorProtocol,
} from './executor-protocol';
import {
  isNetworkError,
  isRetryableStatus,
  parseRetryAfter,
  readErrorBody,
  withRetries,
  type AttemptOutcome,
  type RetryPolicy,
} from './http-retry';
import { HeartbeatResponse, OkResponse } from './runner-api';

/**
 * HTTP client of the executor API, for instances without a database
 * (docker-executor, k8s-executor). It implements the same interface as the
 * in-process binding, so executors cannot tell the two apart.
 *
 * Every call retries network errors, 408, 429 and 5xx with backoff and jitter
 * for up to `retry.maxElapsedMs`. That is safe because every call is
 * idempotent on the server: registration and heartbeats by nature, log lines
 * by their seq, completion and subflow start by the fence, and a claim by the
 * Idempotency-Key it carries — one fresh key per claim() call, the same on
 * each of its retries, so a claim whose answer was lost returns the same task
 * runs instead of claiming more. Error messages never contain the token.
 */

export type ExecutorRetryPolicy = RetryPolicy;

export const DEFAULT_EXECUTOR_RETRY: ExecutorRetryPolicy = {
  maxElapsedMs: 60_000,
  initialDelayMs: 250,
  maxDelayMs: 5_000,
};

export interface ExecutorApiClientOptions {
  /** EXECUTOR_API_URL: the internal API of any server (e.g. http://sluice-server:8081). */
  baseUrl: string;
  /** EXECUTOR_API_TOKEN: sent as X-Internal-Secret; must equal the server's PIPELINE_EXECUTOR_API_TOKEN. */
  token: string;
  fetch?: typeof fetch;
  retry?: Partial<ExecutorRetryPolicy>;
  /** Per-attempt limit of one call (default 30 s); waitForWork adds its own wait to it. */
  requestTimeoutMs?: number;
  /** Pause before waitForWork answers false after a failed long poll (default 1 s). */
  waitForWorkRetryPauseMs?: number;
}

/** 401: the server refused the internal secret. Not retried: only a configuration change helps. */
export class ExecutorApiAuthError extends Error {
  readonly code = 'executor_api_unauthorized';
  constructor(readonly call: string) {
    super(
      `executor API ${call}: 401, the server refused the internal secret; check that EXECUTOR_API_TOKEN ` +
        "equals the server's PIPELINE_EXECUTOR_API_TOKEN (every call is refused while that is empty)",
    );
    this.name = 'ExecutorApiAuthError';
  }
}

/** Any other failed call. `status` is null when no answer arrived (network error, timeout). */
export class ExecutorApiError extends Error {
  constructor(
    readonly call: string,
    readonly status: number | null,
    readonly code: string | null,
    readonly detail: string = status === null ? 'no answer' : String(status),
  ) {
    super(`executor API ${call}: ${detail}`);
    this.name = 'ExecutorApiError';
  }
}

interface CallSpec<S extends z.ZodType> {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  response: S;
  /** The fenced task run the call writes for: a 409 then means its fence is stale. */
  ref?: { taskRunId: string; fence: number };
  timeoutMs?: number;
}

export class ExecutorApiClient implements ExecutorProtocol {
  private readonly baseUrl: string;
  private readonly token: string;
  private readonly fetchImpl: typeof fetch;
  private readonly retry: ExecutorRetryPolicy;
  private readonly requestTimeoutMs: number;
  private readonly waitPauseMs: number;
  private readonly closing = new AbortController();

  constructor(options: ExecutorApiClientOptions) {
    if (!options.baseUrl) throw new Error('ExecutorApiClient: baseUrl (EXECUTOR_API_URL) is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.token = options.token;
    this.fetchImpl = options.fetch ?? fetch;
    this.retry = { ...DEFAULT_EXECUTOR_RETRY, ...options.retry };
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.waitPauseMs = options.waitForWorkRetryPauseMs ?? 1_000;
  }

  async register(registration: z.input<typeof InstanceRegistration>): Promise<void> {
    const body = InstanceRegistration.parse(registration);
    await this.call('register', {
      method: 'POST',
      path: executorPaths.register(),
      body,
      response: OkResponse,
    });
  }

  async claim(request: ClaimRequest): Promise<ClaimedTaskRun[]> {
    const body = ClaimRequest.parse(request);
    // One key per logical claim, reused by its retries: the server answers a repeat with the same task runs.
    const headers = { [IDEMPOTENCY_KEY_HEADER]: randomUUID() };
    const answer = await this.call('claim', {
      method: 'POST',
      path: executorPaths.claim(),
      body,
      headers,
      response: ClaimResponse,
    });
    return answer.taskRuns;
  }

  async markStarted(request: MarkStartedRequest): Promise<void> {
    await this.fenced('markStarted', executorPaths.started, MarkStartedRequest.parse(request), OkResponse);
  }

  // async: a request the schema refuses rejects the promise, as in the in-process binding, instead of throwing.
  async heartbeat(ref: FencedTaskRunRef): Promise<{ cancel: boolean }> {
    return this.fenced('heartbeat', executorPaths.heartbeat, FencedTaskRunRef.parse(ref), HeartbeatResponse);
  }

  async reportLogs(batch: ExecutorLogBatch): Promise<void> {
    await this.fenced('reportLogs', executorPaths.logs, ExecutorLogBatch.parse(batch), OkResponse);
  }

  async complete(request: CompletionRequest): Promise<CompletionResponse> {
    return this.fenced(
      'complete',
      executorPaths.complete,
      CompletionRequest.parse(request),
      CompletionResponse,
    );
  }

  async isStillRunning(taskRunId: string): Promise<boolean> {
    const path = executorPaths.running(encodeURIComponent(taskRunId));
    const answer = await this.call('isStillRunning', { method: 'GET', path, response: StillRunningResponse });
    return answer.running;
  }

  async cancelRequested(taskRunIds: string[]): Promise<string[]> {
    const body = CancelRequestedRequest.parse({ taskRunIds });
    const answer = await this.call('cancelRequested', {
      method: 'POST',
      path: executorPaths.cancelRequested(),
      body,
      response: CancelRequestedResponse,
    });
    return answer.taskRunIds;
  }

  async startSubflow(request: StartSubflowRequest): Promise<StartSubflowResponse> {
    const body = StartSubflowRequest.parse(request);
    return this.fenced('startSubflow', executorPaths.subflow, body, StartSubflowResponse);
  }

  /**
   * One long poll, never retried: a failed one (no answer, 5xx, 429) pauses
   * briefly and answers false, and the caller simply polls again. 401 and
   * other refusals throw, since looping cannot fix them.
   */
  async waitForWork(timeoutMs: number): Promise<boolean> {
    const spec = {
      method: 'GET' as const,
      path: executorPaths.waitForWork(Math.max(0, Math.round(timeoutMs))),
      response: WaitForWorkResponse,
      timeoutMs: timeoutMs + this.requestTimeoutMs,
    };
    try {
      const outcome = await this.attemptOnce('waitForWork', spec);
      if (outcome.done) return outcome.value.queued;
    } catch (error) {
      if (this.closing.signal.aborted) return false;
      if (!isNetworkError(error) || isFinalError(error)) throw error;
    }
    await sleep(this.waitPauseMs, undefined, { signal: this.closing.signal }).catch(() => undefined);
    return false;
  }

  /** Aborts every call in flight (a pending long poll answers false). For shutdown, after the instance stopped. */
  close(): void {
    this.closing.abort();
  }

  /** A write for one task run: its id is in the path, and a 409 means its fence is stale. */
  private fenced<S extends z.ZodType>(
    name: string,
    path: (taskRunId: string) => string,
    body: { taskRunId: string; fence: number },
    response: S,
  ): Promise<z.output<S>> {
    const url = path(encodeURIComponent(body.taskRunId));
    return this.call(name, { method: 'POST', path: url, body, response, ref: body });
  }

  private call<S extends z.ZodType>(name: string, spec: CallSpec<S>): Promise<z.output<S>> {
    return withRetries(this.retry, () => this.attemptOnce(name, spec), {
      signal: this.closing.signal,
      isFinal: isFinalError,
      giveUp: (failure, attempts, elapsedMs) =>
        new ExecutorApiError(
          name,
          failure.status,
          failure.code,
          `${failure.detail}; gave up after ${attempts} attempts in ${Math.round(elapsedMs / 1000)} s`,
        ),
    });
  }

  /** One HTTP exchange: a value, a retryable failure, or a thrown final error. */
  private async attemptOnce<S extends z.ZodType>(
    name: string,
    spec: CallSpec<S>,
  ): Promise<AttemptOutcome<z.output<S>>> {
    const timeout = AbortSignal.timeout(spec.timeoutMs ?? this.requestTimeoutMs);
    const res = await this.fetchImpl(this.baseUrl + spec.path, {
      method: spec.method,
      headers: {
        [INTERNAL_SECRET_HEADER]: this.token,
        accept: 'application/json',
        'user-agent': 'sluice-executor',
        ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...spec.headers,
      },
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      signal: AbortSignal.any([this.closing.signal, timeout]),
    });
    if (res.ok) {
      // A body cut off mid-way throws here and is retried as a network error.
      const parsed = spec.response.safeParse(parseJson(await res.text()));
      if (parsed.success) return { done: true, value: parsed.data };
      throw new ExecutorApiError(
        name,
        res.status,
        'invalid_response',
        `${res.status} with an answer that is not the executor protocol`,
      );
    }
    const { code, message } = await readErrorBody(res);
    if (res.status === 401) throw new ExecutorApiAuthError(name);
    if (res.status === 409 && spec.ref) throw new StaleFenceError(spec.ref.taskRunId, spec.ref.fence);
    const detail = `${res.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
    if (!isRetryableStatus(res.status)) throw new ExecutorApiError(name, res.status, code, detail);
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
    return { done: false, failure: { status: res.status, code, detail, retryAfterMs } };
  }
}

function isFinalError(error: unknown): boolean {
  return (
    error instanceof ExecutorApiError ||
    error instanceof ExecutorApiAuthError ||
    error instanceof StaleFenceError
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
