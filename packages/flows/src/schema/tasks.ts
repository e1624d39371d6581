import { z } from 'zod';
import type { ScriptInterpreter } from '@sluice/protocol';
import type { TaskType } from '../types';
import { ExecutorBlockSchema, noExecutor } from './executor-block';
import { duration, Env, FLOW_REF_PATTERN, Retry, StringLike, TaskId } from './fields';

/*
 * One strict schema per task type. `timeout` is parsed to milliseconds here
 * and renamed to `timeoutMs` by the caller (see types.ts for the naming rule).
 */

const common = {
  id: TaskId,
  type: z.string(),
  // Names are checked against the flow's tasks later (unknown_dependency), not here.
  depends_on: z.array(z.string()).optional(),
  env: Env.optional(),
  retry: Retry.optional(),
  timeout: duration({ allowZero: false }).optional(),
};

const runnable = { ...common, executor: ExecutorBlockSchema.optional() };

// The protocol's list, restated so this package needs no runtime code from it; the two checks keep them equal.
const INTERPRETERS = ['bash', 'sh', 'python', 'node', 'bun'] as const satisfies readonly ScriptInterpreter[];
const ALL_INTERPRETERS_LISTED: [Exclude<ScriptInterpreter, (typeof INTERPRETERS)[number]>] extends [never]
  ? true
  : false = true;
void ALL_INTERPRETERS_LISTED;

const Command = z.array(StringLike).min(1, 'a command needs at least the program to run');

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

const Status = z.int().min(100).max(599);

const Url = z.string().superRefine((url, ctx) => {
  if (url.includes('{{')) return; // checked when rendered, once the outputs exist
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    ctx.addIssue({ code: 'custom', message: `expected an absolute http(s) URL, got "${url}"` });
  }
});

const ConnectorRef = {
  image: z.string().min(1).optional(),
  command: Command.optional(),
};

const Config = z.record(z.string(), z.unknown());

const SyncEndpoint = z.strictObject({ ...ConnectorRef, config: Config.optional() });

/**
 * The configured catalog of a sync (docs/connectors.md#sync), checked for what
 * the runner needs to pick the streams; the rest is the connectors' and kept
 * as written. A sync without one is refused when it runs (no streams).
 */
const SyncCatalog = z.looseObject({
  streams: z.array(
    z.looseObject({
      stream: z.looseObject({ name: z.string().min(1), json_schema: Config }),
      sync_mode: z.enum(['full_refresh', 'incremental']),
      destination_sync_mode: z.enum(['append', 'overwrite', 'append_dedup']),
    }),
  ),
});

export const TASK_SCHEMAS = {
  command: z.strictObject({ ...runnable, type: z.literal('command'), command: Command }),
  script: z.strictObject({
    ...runnable,
    type: z.literal('script'),
    interpreter: z.enum(INTERPRETERS).default('bash'),
    script: z.string().min(1, 'the script is empty'),
  }),
  http: z.strictObject({
    ...common,
    type: z.literal('http'),
    executor: noExecutor('http').optional(),
    request: z.strictObject({
      method: z
        .preprocess((m) => (typeof m === 'string' ? m.toUpperCase() : m), z.enum(HTTP_METHODS))
        .default('GET'),
      url: Url,
      headers: z.record(z.string().min(1), StringLike).optional(),
      body: z.unknown().optional(),
      expected_status: z.union([Status, z.array(Status).min(1)]).optional(),
    }),
  }),
  subflow: z.strictObject({
    ...common,
    type: z.literal('subflow'),
    executor: noExecutor('subflow').optional(),
    flow: z.string().regex(FLOW_REF_PATTERN, 'expected a flow id ("load") or "namespace/flow"'),
    inputs: z.record(z.string(), z.unknown()).optional(),
    wait: z.boolean().default(true),
  }),
  connector: z.strictObject({
    ...runnable,
    type: z.literal('connector'),
    operation: z.enum(['spec', 'check', 'discover']),
    connector: z.strictObject(ConnectorRef),
    config: Config.optional(),
  }),
  sync: z.strictObject({
    ...runnable,
    type: z.literal('sync'),
    source: SyncEndpoint,
    destination: SyncEndpoint,
    catalog: SyncCatalog.optional(),
  }),
} satisfies Record<TaskType, z.ZodType>;
