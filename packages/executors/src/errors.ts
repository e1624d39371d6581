/**
 * A message for logs and completion errors from anything thrown. Duck-typed,
 * because errors from another realm (undici inside jest's VM, for one) fail
 * `instanceof Error`. A wrapped cause (fetch's "fetch failed") is appended.
 */
export function errorMessage(err: unknown, depth = 0): string {
  if (typeof err === 'string') return err;
  if (typeof err !== 'object' || err === null || !('message' in err)) return String(err);
  const message = String(err.message);
  const cause = 'cause' in err ? err.cause : undefined;
  const chained = cause !== undefined && cause !== null && depth < 3;
  return chained ? `${message}: ${errorMessage(cause, depth + 1)}` : message;
}

/** A StaleFenceError, also when it crossed a realm or was rebuilt from a 409 by a client. */
export function isStaleFenceError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === 'stale_fence';
}
