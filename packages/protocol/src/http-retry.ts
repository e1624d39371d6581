import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from './errors';

/**
 * The retry loop both API clients (runner and executor) share: exponential
 * backoff with jitter, honouring Retry-After, bounded by the time elapsed
 * since the first attempt. What counts as a final answer, and the error a
 * client throws, stay with each client.
 */

export interface RetryPolicy {
  /** Give up once this much time has passed since the first attempt. */
  maxElapsedMs: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

/** Why an attempt deserves another one. `status` is null when no answer arrived. */
export interface RetryableFailure {
  status: number | null;
  code: string | null;
  detail: string;
  /** From a Retry-After header; the next wait is at least this long (capped by maxDelayMs). */
  retryAfterMs?: number;
}

export type AttemptOutcome<T> = { done: true; value: T } | { done: false; failure: RetryableFailure };

export interface RetryOptions {
  /** Aborts the loop, including its wait between attempts. */
  signal?: AbortSignal;
  /** Errors the attempt throws that must not be retried even if they look like network errors. */
  isFinal: (error: unknown) => boolean;
  /** The error thrown when the time is up. */
  giveUp: (last: RetryableFailure, attempts: number, elapsedMs: number) => Error;
}

export const isRetryableStatus = (status: number): boolean =>
  status === 408 || status === 429 || status >= 500;

/**
 * Runs `attempt` until it returns a value or throws a final error. A thrown
 * network error (no usable answer) is retried like a retryable status. The
 * attempt receives the previous failure, for clients that must explain why
 * they cannot resend.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  attempt: (previous: RetryableFailure | null) => Promise<AttemptOutcome<T>>,
  options: RetryOptions,
): Promise<T> {
  const startedAt = Date.now();
  let previous: RetryableFailure | null = null;
  for (let n = 1; ; n++) {
    let failure: RetryableFailure;
    try {
      const outcome = await attempt(previous);
      if (outcome.done) return outcome.value;
      failure = outcome.failure;
    } catch (error) {
      if (options.signal?.aborted || options.isFinal(error) || !isNetworkError(error)) throw error;
      failure = { status: null, code: null, detail: `no answer (${describeNetworkError(error)})` };
    }
    previous = failure;
    const elapsed = Date.now() - startedAt;
    const delay = backoffDelay(policy, n, failure.retryAfterMs ?? 0);
    if (elapsed + delay > policy.maxElapsedMs) throw options.giveUp(failure, n, elapsed);
    await sleep(delay, undefined, { signal: options.signal });
  }
}

/** Delay before attempt n + 1: half fixed, half random ("equal jitter"), never below Retry-After. */
export function backoffDelay(policy: RetryPolicy, attempt: number, retryAfterMs = 0): number {
  const backoff = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
  return Math.min(policy.maxDelayMs, Math.max(retryAfterMs, backoff / 2 + (Math.random() * backoff) / 2));
}

const MAX_ERROR_MESSAGE_CHARS = 300;

/** The `{error:{code,message}}` body of a failed answer, or nulls when it is something else. */
export async function readErrorBody(res: {
  text(): Promise<string>;
}): Promise<{ code: string | null; message: string | null }> {
  const text = await res.text().catch(() => '');
  try {
    const parsed = ApiError.safeParse(JSON.parse(text));
    if (parsed.success) {
      return {
        code: parsed.data.error.code,
        message: parsed.data.error.message.slice(0, MAX_ERROR_MESSAGE_CHARS),
      };
    }
  } catch {
    // not JSON: the status alone says enough
  }
  return { code: null, message: null };
}

export function parseRetryAfter(value: string | null): number {
  if (!value) return 0;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
}

/**
 * Errors that mean "no usable answer": connection refused or reset, DNS, per-attempt timeout, a cut
 * body. Checked by name, not instanceof: fetch's errors may come from another realm, and
 * node:http's are plain errors with a code.
 */
export function isNetworkError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === 'TypeError' || name === 'TimeoutError' || name === 'AbortError' || typeof code === 'string';
}

export function describeNetworkError(error: unknown): string {
  const { name, message, code, cause } = error as {
    name?: unknown;
    message?: unknown;
    code?: unknown;
    cause?: unknown;
  };
  if (name === 'TimeoutError') return 'timed out';
  const causeCode =
    typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  if (typeof causeCode === 'string') return causeCode;
  if (typeof code === 'string') return code;
  return typeof message === 'string' ? message : 'unknown error';
}
