import { z } from 'zod';
import type { SelectableExecutorType } from '@sluice/protocol';
import type { ExecutorField } from '../types';
import { coded, describe } from '../zod-issues';
import { POOL_PATTERN } from './fields';

export const SELECTABLE_EXECUTOR_TYPES = [
  'process',
  'docker',
  'kubernetes',
] as const satisfies readonly SelectableExecutorType[];

/**
 * The fields each executor type accepts. `process` runs on the host in a
 * process group: no image, no runner injection, and no CPU/memory limits
 * (nothing would enforce them), so a block asking for them is an error
 * rather than a silent no-op. `pull` is docker's; placement and identity
 * (`node_selector`, `tolerations`, `service_account`) are kubernetes'.
 */
export const ACCEPTED_EXECUTOR_FIELDS: Record<SelectableExecutorType, readonly ExecutorField[]> = {
  process: ['type', 'pool'],
  docker: ['type', 'pool', 'image', 'inject_runner', 'resources', 'pull'],
  kubernetes: [
    'type',
    'pool',
    'image',
    'inject_runner',
    'resources',
    'node_selector',
    'tolerations',
    'service_account',
  ],
};

export function acceptsField(type: SelectableExecutorType, field: ExecutorField): boolean {
  return ACCEPTED_EXECUTOR_FIELDS[type].includes(field);
}

/** An executor `type`: process, docker or kubernetes (also the entries of namespace.yaml `allowed_executors`). */
export const ExecutorType = z.unknown().transform((value, ctx): SelectableExecutorType => {
  if (SELECTABLE_EXECUTOR_TYPES.some((t) => t === value)) return value as SelectableExecutorType;
  coded(
    ctx,
    'invalid_executor_type',
    value === 'inline'
      ? '"inline" cannot be chosen: http and subflow tasks run inline by their type; other tasks need "process", "docker" or "kubernetes"'
      : `expected "process", "docker" or "kubernetes", got ${describe(value)}`,
  );
  return z.NEVER;
});

// Kubernetes quantity notation, which the docker executor also understands.
const CPU = /^(\d+(\.\d+)?|\d+m)$/;
const MEMORY = /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;

function quantity(pattern: RegExp, example: string) {
  return z
    .union([z.string(), z.number().transform(String)], { error: `expected a quantity such as ${example}` })
    .pipe(z.string().regex(pattern, `expected a quantity such as ${example}`));
}

export const ExecutorBlockSchema = z.strictObject({
  type: ExecutorType.optional(),
  pool: z.string().regex(POOL_PATTERN, 'a pool name has only letters, digits, ".", "_" and "-"').optional(),
  image: z.string().min(1).optional(),
  inject_runner: z.boolean().optional(),
  resources: z
    .strictObject({
      cpu: quantity(CPU, '"0.5", "2" or "500m"').optional(),
      memory: quantity(MEMORY, '"256Mi" or "1Gi"').optional(),
    })
    .optional(),
  pull: z.enum(['always', 'if_not_present', 'never']).optional(),
  node_selector: z.record(z.string().min(1), z.string()).optional(),
  tolerations: z.array(z.record(z.string(), z.unknown())).optional(),
  service_account: z.string().min(1).optional(),
});

/** Executor blocks are forbidden on tasks that run inline. */
export function noExecutor(taskType: 'http' | 'subflow') {
  return z.unknown().transform((_value, ctx): never => {
    coded(
      ctx,
      'executor_not_allowed',
      `${taskType === 'http' ? 'an' : 'a'} ${taskType} task runs inline on whichever instance claims it and takes no executor block; remove it`,
    );
    return z.NEVER;
  });
}
