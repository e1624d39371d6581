import { z } from 'zod';
import { ExecutorType } from '@sluice/protocol';

/**
 * Schemas for environment values. Each takes the raw string and produces the
 * typed value. Messages say what was expected and never echo the value: the
 * reader adds what was received (or hides it for secrets).
 */
export type EnvSchema<T> = z.ZodType<T, string>;

function fail(
  ctx: { addIssue: (issue: { code: 'custom'; message: string }) => void },
  message: string,
): never {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/** Parses `500ms`, `30s`, `5m`, `1h`, `30d`, `1h30m` or a bare number of seconds into milliseconds. */
export function parseDuration(text: string): number | undefined {
  const value = text.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(value)) return undefined;
  let total = 0;
  for (const [, amount, unit] of value.matchAll(DURATION_PART)) {
    total += Number(amount) * (DURATION_UNITS[unit ?? 's'] ?? 1000);
  }
  return Math.round(total);
}

/** A duration in milliseconds. Zero is refused unless `allowZero` (then it usually means "no limit"). */
export function duration(options: { allowZero?: boolean } = {}): EnvSchema<number> {
  return z.string().transform((raw, ctx) => {
    const ms = parseDuration(raw);
    if (ms === undefined)
      return fail(ctx, 'expected a duration such as 500ms, 30s, 5m, 1h or 30d (a bare number is seconds)');
    if (ms === 0 && !options.allowZero) return fail(ctx, 'must be longer than 0');
    return ms;
  });
}

/** A comma-separated list; entries are trimmed and empty entries dropped. */
export function list(options: { min?: number } = {}): EnvSchema<string[]> {
  return z.string().transform((raw, ctx) => {
    const items = raw
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
    if (items.length < (options.min ?? 0))
      return fail(ctx, `expected a comma-separated list of at least ${options.min} entries`);
    return items;
  });
}

/** A whole number, optionally bounded. */
export function int(options: { min?: number; max?: number } = {}): EnvSchema<number> {
  const { min, max } = options;
  const bounds =
    min !== undefined && max !== undefined
      ? ` between ${min} and ${max}`
      : min !== undefined
        ? ` ≥ ${min}`
        : max !== undefined
          ? ` ≤ ${max}`
          : '';
  return z.string().transform((raw, ctx) => {
    const text = raw.trim();
    const value = Number(text);
    if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value))
      return fail(ctx, `expected a whole number${bounds}`);
    if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
      return fail(ctx, `expected a whole number${bounds}`);
    }
    return value;
  });
}

const TRUE_WORDS = ['true', '1', 'yes', 'on'];
const FALSE_WORDS = ['false', '0', 'no', 'off'];

/** true/false, 1/0, yes/no, on/off (any case). */
export function bool(): EnvSchema<boolean> {
  return z.string().transform((raw, ctx) => {
    const word = raw.trim().toLowerCase();
    if (TRUE_WORDS.includes(word)) return true;
    if (FALSE_WORDS.includes(word)) return false;
    return fail(ctx, 'expected true or false');
  });
}

/** Splits `host:port` or `[v6]:port`; undefined when it is not one. */
export function splitHostPort(addr: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(addr.trim());
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port > 65535) return undefined;
  return { host: match[1] ?? match[2] ?? '', port };
}

/** A listen address `host:port` such as `0.0.0.0:8080` (port 0 picks a free port). */
export function hostPort(): EnvSchema<string> {
  return z.string().transform((raw, ctx) => {
    if (!splitHostPort(raw)) return fail(ctx, 'expected host:port, for example 0.0.0.0:8080 or [::]:8080');
    return raw.trim();
  });
}

/** An absolute http(s) URL; a trailing slash is dropped so callers can append paths. */
export function httpUrl(): EnvSchema<string> {
  return z.string().transform((raw, ctx) => {
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      return fail(ctx, 'expected an http(s) URL such as http://sluice-internal:8081');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(ctx, 'expected an http(s) URL');
    return raw.trim().replace(/\/+$/, '');
  });
}

/** A PostgreSQL connection URL. */
export function postgresUrl(): EnvSchema<string> {
  return z.string().transform((raw, ctx) => {
    const text = raw.trim();
    if (!/^postgres(ql)?:\/\/[^\s]+$/.test(text))
      return fail(ctx, 'expected a URL starting with postgres:// or postgresql://');
    return text;
  });
}

/** One of a fixed set of words. */
export function oneOf<const T extends string>(values: readonly T[]): EnvSchema<T> {
  return z.string().transform((raw, ctx) => {
    const word = raw.trim();
    const found = values.find((value) => value === word);
    return found ?? fail(ctx, `expected one of ${values.join(', ')}`);
  });
}

/** Free text that must not be empty after trimming (empty values are treated as unset before this). */
export function text(options: { minLength?: number } = {}): EnvSchema<string> {
  return z.string().transform((raw, ctx) => {
    const value = raw.trim();
    if (options.minLength && value.length < options.minLength) {
      return fail(ctx, `must be at least ${options.minLength} characters long`);
    }
    return value;
  });
}

/**
 * An owner ID. It becomes the value of the `sluice.io/owner` label on
 * containers, Jobs and Secrets, so it follows Kubernetes label-value rules.
 */
export function ownerId(): EnvSchema<string> {
  return z.string().transform((raw, ctx) => {
    const value = raw.trim();
    if (value.length > 63 || !/^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$/.test(value)) {
      return fail(
        ctx,
        'expected at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit',
      );
    }
    return value;
  });
}

/** A Kubernetes CPU quantity: `0.5`, `2`, `500m`. */
export function cpuQuantity(): EnvSchema<string> {
  return z.string().transform((raw, ctx) => {
    const value = raw.trim();
    if (!/^(\d+(\.\d+)?|\d+m)$/.test(value) || Number.parseFloat(value) === 0) {
      return fail(ctx, 'expected a CPU amount such as 0.5, 2 or 500m');
    }
    return value;
  });
}

/** A Kubernetes memory quantity: `256Mi`, `1Gi`, `512M`, or bytes. */
export function memoryQuantity(): EnvSchema<string> {
  return z.string().transform((raw, ctx) => {
    const value = raw.trim();
    if (!/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|K|M|G|T)?$/.test(value) || Number.parseFloat(value) === 0) {
      return fail(ctx, 'expected a memory amount such as 256Mi, 1Gi or 512M');
    }
    return value;
  });
}

/** Which executors an instance runs: `auto`, or an explicit list (inline is always added). */
export type ExecutorSelection = 'auto' | ExecutorType[];

export function executorSelection(): EnvSchema<ExecutorSelection> {
  return z.string().transform((raw, ctx): ExecutorSelection => {
    const value = raw.trim();
    if (value === 'auto') return 'auto';
    const names = value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
    const unknown = names.filter((name) => !ExecutorType.safeParse(name).success);
    if (names.length === 0 || unknown.length > 0) {
      const which = unknown.length > 0 ? `unknown executor ${unknown.join(', ')}; ` : '';
      return fail(ctx, `${which}expected auto or a comma list of ${ExecutorType.options.join(', ')}`);
    }
    const selected = new Set<ExecutorType>(['inline', ...names.map((name) => ExecutorType.parse(name))]);
    return ExecutorType.options.filter((type) => selected.has(type));
  });
}
