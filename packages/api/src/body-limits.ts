import express, { type RequestHandler } from 'express';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The largest body each internal route reads, in bytes. A route reads its
 * body only after the caller is authenticated (run token, X-Internal-Secret),
 * so an unauthenticated caller cannot make the server read or buffer
 * anything; a body over its route's limit is `413 payload_too_large` and
 * nothing of it is stored (docs/input-validation.md lists them all, with the
 * public API's).
 */
export const RUNNER_BODY_LIMITS = {
  /** {fence, pid?} */
  started: 16 * KiB,
  /** {fence} */
  heartbeat: 16 * KiB,
  /** {fence, exitCode, stoppedBy, error}: the error is at most 8192 characters, which JSON may escape. */
  result: 64 * KiB,
  /** Up to 1000 metrics of a name, a value and a few tags. */
  metrics: 1 * MiB,
  /** Any number of outputs of at most 64 KiB each (the runner drops larger ones). */
  outputs: 16 * MiB,
  /**
   * The runner sends at most 500 lines of at most 16 KiB per batch (8 MiB);
   * the rest is room for JSON escaping.
   */
  logs: 32 * MiB,
  /**
   * One committed sync state with its per-stream counts: a GLOBAL state
   * carries every stream's cursor, so a big database's can be large.
   */
  syncState: 16 * MiB,
} as const;

export const EXECUTOR_BODY_LIMITS = {
  /** register, claim, cancel-requested (≤ 1000 ids), started, heartbeat, subflow (its inputs). */
  small: 1 * MiB,
  /** complete: carries the task's outputs (at most 64 KiB each), as the runner API's outputs do. */
  complete: RUNNER_BODY_LIMITS.outputs,
  /** The executor's own lines of a task run, up to 5000 per batch. */
  logs: 16 * MiB,
} as const;

/** A JSON body parser for one route, with that route's limit. */
export function jsonBody(limitBytes: number): RequestHandler {
  return express.json({ limit: limitBytes });
}
