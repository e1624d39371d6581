/**
 * Keeps secrets out of logs in two ways: fields whose name looks sensitive are
 * replaced whole, and every value registered with `registerSecretValue` (for
 * example a task's resolved secrets) is cut out of any string, wherever it
 * appears — message, nested field or error stack.
 */

export const REDACTED = '[redacted]';

/** Field names whose values are never logged. */
export const SENSITIVE_KEY =
  /secret|token|password|passwd|key|dsn|database_url|authorization|cookie|credential/i;

/** Shorter values would cut ordinary words out of log lines. */
export const MIN_SECRET_LENGTH = 6;

const MAX_DEPTH = 8;
/** `scheme://user:password@` — the password part of a URL. */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi;

const secretValues = new Set<string>();
let secretPattern: RegExp | undefined;

/** Registers a value to be cut out of every log line of this process. Values shorter than 6 characters are ignored. */
export function registerSecretValue(value: string): void {
  if (value.length < MIN_SECRET_LENGTH || secretValues.has(value)) return;
  secretValues.add(value);
  secretPattern = undefined;
}

/** Stops redacting a value (e.g. tests; a server keeps values registered for its lifetime). */
export function forgetSecretValue(value: string): void {
  if (secretValues.delete(value)) secretPattern = undefined;
}

function pattern(): RegExp | undefined {
  if (secretValues.size === 0) return undefined;
  if (!secretPattern) {
    // Longest first, so a secret that contains another is removed whole.
    const alternatives = [...secretValues]
      .sort((a, b) => b.length - a.length)
      .map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    secretPattern = new RegExp(alternatives.join('|'), 'g');
  }
  return secretPattern;
}

/** Removes registered secret values and URL passwords from a string. */
export function redactString(text: string): string {
  const secrets = pattern();
  const scrubbed = secrets ? text.replace(secrets, REDACTED) : text;
  return scrubbed.replace(URL_PASSWORD, `$1${REDACTED}@`);
}

/** A redacted copy of any loggable value; the input is never changed. */
export function redactValue(value: unknown): unknown {
  return redact(value, 0, new WeakSet());
}

function redact(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  // Buffers are often keys: their bytes would otherwise be serialised in full.
  if (Buffer.isBuffer(value)) return `[binary ${value.length} bytes]`;
  if (value instanceof Date) return value;
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[too deep]';
  seen.add(value);
  if (value instanceof Error) {
    return {
      name: value.name,
      message: redactString(value.message),
      ...(value.stack ? { stack: redactString(value.stack) } : {}),
    };
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1, seen));
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    copy[key] = SENSITIVE_KEY.test(key) ? REDACTED : redact(field, depth + 1, seen);
  }
  return copy;
}

/**
 * Redacts the string-keyed fields of a log record in place (winston's own
 * record object; nested values are replaced by redacted copies, never changed).
 */
export function redactRecord<R extends Record<string, unknown>>(record: R, keep: readonly string[] = []): R {
  const fields: Record<string, unknown> = record;
  for (const key of Object.keys(fields)) {
    if (keep.includes(key)) continue;
    fields[key] = SENSITIVE_KEY.test(key) ? REDACTED : redact(fields[key], 0, new WeakSet());
  }
  return record;
}
