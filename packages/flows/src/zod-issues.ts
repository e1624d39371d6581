import { z } from 'zod';
import type { ValidationIssue } from '@sluice/protocol';
import { didYouMean, issue, listWords, type PathSegment, type ValidationCode } from './issues';

/*
 * Turns zod's issues into Sluice validation issues: our codes, our paths, and
 * messages written for someone editing a YAML file. Schemas attach a Sluice
 * code to their own checks with `coded()` (a custom issue whose params carry
 * the code); everything else is mapped from zod's issue kind here.
 */

type ZodIssue = z.ZodError['issues'][number];

export interface IssueContext {
  /** The raw value the schema ran on (to tell a missing field from a wrong one). */
  raw: unknown;
  /** The schema, to name the fields that are known where an unknown one was found. */
  schema: z.ZodType;
  /** Segments in front of every zod path (`['tasks', 2]`). */
  base: PathSegment[];
  format: (segments: readonly PathSegment[]) => string;
}

/** A custom issue carrying a Sluice code, for checks inside transforms and refinements. */
export function coded(ctx: z.RefinementCtx, code: ValidationCode, message: string): void {
  ctx.addIssue({ code: 'custom', message, params: { code } });
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let current = raw;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** How a wrong value reads in a message: `the string "abc"`, `a list`, `number 5`. */
export function describe(value: unknown): string {
  if (value === null) return 'null (an empty value)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value} ${String(value)}`;
}

const NOUNS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
};

/** The fields a strict object at `path` of `schema` knows, for "did you mean" hints. */
function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const unwrap = (s: z.ZodType): z.ZodType[] => {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) return unwrap(s.unwrap() as z.ZodType);
    if (s instanceof z.ZodDefault) return unwrap(s.unwrap() as z.ZodType);
    if (s instanceof z.ZodPipe) return unwrap(s.in as z.ZodType);
    if (s instanceof z.ZodUnion) return (s.options as z.ZodType[]).flatMap(unwrap);
    return [s];
  };
  let current = unwrap(schema);
  for (const key of path) {
    current = current.flatMap((s): z.ZodType[] => {
      if (s instanceof z.ZodObject && typeof key === 'string' && key in s.shape) {
        return unwrap(s.shape[key] as z.ZodType);
      }
      if (s instanceof z.ZodArray && typeof key === 'number') return unwrap(s.element as z.ZodType);
      if (s instanceof z.ZodRecord) return unwrap(s.valueType as z.ZodType);
      return [];
    });
  }
  return current.flatMap((s) => (s instanceof z.ZodObject ? Object.keys(s.shape) : []));
}

function sizeMessage(zi: ZodIssue & { code: 'too_small' | 'too_big' }): string {
  const bound = zi.code === 'too_small' ? zi.minimum : zi.maximum;
  const inclusive = zi.inclusive !== false;
  if (zi.origin === 'array') {
    return zi.code === 'too_small'
      ? `needs at least ${String(bound)} item(s)`
      : `takes at most ${String(bound)} item(s)`;
  }
  if (zi.origin === 'string') {
    return zi.code === 'too_small' ? 'must not be empty' : `must be at most ${String(bound)} characters`;
  }
  const op =
    zi.code === 'too_small' ? (inclusive ? 'at least' : 'greater than') : inclusive ? 'at most' : 'less than';
  return `must be ${op} ${String(bound)}`;
}

/** The single union branch the user evidently meant (its issues are not just "wrong type here"). */
function intendedBranch(zi: ZodIssue & { code: 'invalid_union' }): ZodIssue[] | undefined {
  const meaningful = zi.errors.filter(
    (branch) => !branch.every((b) => b.code === 'invalid_type' && b.path.length === 0),
  );
  return meaningful.length === 1 ? meaningful[0] : undefined;
}

/** `within`: the path of the union whose branch `zi` comes from (branch paths are relative to it). */
function mapOne(zi: ZodIssue, ctx: IssueContext, out: ValidationIssue[], within: PathSegment[] = []): void {
  const at = [...within, ...zi.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  const segments = [...ctx.base, ...at];
  const path = ctx.format(segments);
  switch (zi.code) {
    case 'custom': {
      const code = (zi.params as { code?: ValidationCode } | undefined)?.code ?? 'invalid_value';
      out.push(issue(code, path, zi.message));
      return;
    }
    case 'unrecognized_keys': {
      const known = knownKeys(ctx.schema, at);
      for (const key of zi.keys) {
        out.push(
          issue(
            'unknown_field',
            ctx.format([...segments, key]),
            `unknown field "${key}"${didYouMean(key, known)}`,
          ),
        );
      }
      return;
    }
    case 'invalid_type': {
      const actual = valueAt(ctx.raw, at);
      const last = segments.at(-1);
      if (actual === undefined) {
        out.push(issue('required', path, `"${String(last)}" is required`));
      } else {
        const expected = NOUNS[zi.expected] ?? zi.expected;
        out.push(issue('invalid_type', path, `expected ${expected}, got ${describe(actual)}`));
      }
      return;
    }
    case 'invalid_value':
      out.push(
        issue(
          'invalid_value',
          path,
          `expected ${listWords(zi.values.map(String))}, got ${describe(valueAt(ctx.raw, at))}`,
        ),
      );
      return;
    case 'invalid_union': {
      const branch = intendedBranch(zi);
      if (branch) {
        for (const sub of branch) mapOne(sub, ctx, out, at);
      } else {
        out.push(issue('invalid_type', path, `${zi.message}, got ${describe(valueAt(ctx.raw, at))}`));
      }
      return;
    }
    case 'too_small':
    case 'too_big':
      out.push(
        issue('invalid_value', path, /^Too (small|big)/.test(zi.message) ? sizeMessage(zi) : zi.message),
      );
      return;
    case 'invalid_key':
      out.push(
        issue(
          'invalid_value',
          path,
          `invalid key "${String(segments.at(-1))}": ${zi.issues[0]?.message ?? zi.message}`,
        ),
      );
      return;
    default:
      out.push(issue('invalid_value', path, zi.message));
  }
}

export function mapZodIssues(issues: readonly ZodIssue[], ctx: IssueContext): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const zi of issues) mapOne(zi, ctx, out);
  return out;
}
