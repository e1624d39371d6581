import { z } from 'zod';
import { cronProblem } from '../cron';
import { DURATION_HINT, parseDuration } from '../duration';
import { coded, describe } from '../zod-issues';
import type { RetryPolicy } from '../types';

/** Task ids: a letter, then letters, digits, `_` or `-` (they appear in templates and log paths). */
export const TASK_ID_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]*$/;
/** A subflow target: `flow` (same namespace) or `namespace/flow`. */
export const FLOW_REF_PATTERN = /^(?:[a-zA-Z0-9][a-zA-Z0-9._-]*\/)?[a-zA-Z][a-zA-Z0-9_-]*$/;
/** Pool names end up in the comma-separated SLUICE_POOLS, so no commas or spaces. */
export const POOL_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;

export const TaskId = z
  .string()
  .regex(TASK_ID_PATTERN, 'a task id starts with a letter and has only letters, digits, "_" and "-"');

/**
 * A string that YAML may have typed as a number or boolean (`PORT: 8080`,
 * `command: [sleep, 5]`): taken as its text, which is what the author meant.
 */
export const StringLike = z.union([z.string(), z.number().transform(String), z.boolean().transform(String)], {
  error: 'expected a string',
});

/** A duration field, in milliseconds after parsing. */
export function duration(options: { allowZero: boolean }) {
  return z.unknown().transform((value, ctx): number => {
    const ms = parseDuration(value);
    if (ms === undefined) {
      coded(ctx, 'invalid_duration', `expected ${DURATION_HINT}, got ${describe(value)}`);
      return z.NEVER;
    }
    if (ms === 0 && !options.allowZero) {
      coded(ctx, 'invalid_duration', 'must be longer than 0');
      return z.NEVER;
    }
    return ms;
  });
}

export const Retry = z
  .strictObject({
    max_attempts: z.int().min(1),
    backoff: duration({ allowZero: true }).optional(),
  })
  .transform((r): RetryPolicy => ({ maxAttempts: r.max_attempts, backoffMs: r.backoff ?? 0 }));

export const Schedule = z.string().superRefine((value, ctx) => {
  const problem = cronProblem(value);
  if (problem !== undefined) coded(ctx, 'invalid_cron', problem);
});

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const EnvName = z
  .string()
  .regex(
    ENV_NAME,
    'an environment variable name has only letters, digits and "_" and does not start with a digit',
  )
  .refine((name) => !name.startsWith('SLUICE_'), 'names starting with SLUICE_ are reserved for the runner');

export const SecretRef = z.strictObject({ secret: z.string().min(1) });

export const Env = z.record(
  EnvName,
  z.union([z.string(), z.number().transform(String), z.boolean().transform(String), SecretRef], {
    error: 'expected a string or { secret: <name> }',
  }),
);
