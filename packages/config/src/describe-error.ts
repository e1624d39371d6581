import { inspect } from 'node:util';

function messageOf(err: Error): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    // Node's connect errors (one per address tried) come as an AggregateError with an empty message.
    const inner = err.errors.map((e: unknown) => describeError(e)).join('; ');
    return err.message ? `${err.message}: ${inner}` : inner;
  }
  if (err.message) return err.message;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? `${err.name} ${code}` : `${err.name} (without a message)`;
}

/**
 * One line (or a few) saying what went wrong, for whatever was thrown: an
 * Error's message (and its cause's, when that adds something), a string, an
 * object's `message`, or else the value itself, so a start-up failure never
 * prints `undefined` and nothing more.
 */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const message = messageOf(err);
    const cause = err.cause === undefined ? undefined : describeError(err.cause);
    return cause && !message.includes(cause) ? `${message} (cause: ${cause})` : message;
  }
  if (typeof err === 'string') return err || 'an empty string was thrown';
  if (typeof err === 'object' && err !== null) {
    const message = (err as { message?: unknown }).message;
    if (typeof message === 'string' && message) return message;
  }
  if (err === undefined || err === null) return `${String(err)} was thrown, without any message`;
  const kind = typeof err === 'object' ? 'an object' : `a ${typeof err}`;
  return `${kind} was thrown: ${inspect(err, { depth: 4, breakLength: Infinity })}`;
}
