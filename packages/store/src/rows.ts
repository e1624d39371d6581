import type { ExecutorType, TaskRunReason, TaskRunState } from '@sluice/protocol';

/**
 * Rows as the store hands them out: camelCase, dates as Date, JSON parsed.
 * The mappers are the one place that knows the snake_case column names.
 */

export type JsonObject = Record<string, unknown>;

export interface TaskRunRow {
  id: string;
  executionId: string;
  taskId: string;
  attempt: number;
  maxAttempts: number;
  state: TaskRunState;
  reason: TaskRunReason | null;
  executorType: ExecutorType;
  /** '' for inline task runs. */
  pool: string;
  executor: JsonObject;
  spec: JsonObject;
  timeoutMs: number;
  fence: number;
  ownerId: string | null;
  externalRef: string | null;
  cancelRequested: boolean;
  /** A parked subflow task run: the child execution it waits for. */
  waitingOnExecutionId: string | null;
  exitCode: number | null;
  error: string | null;
  availableAt: Date;
  createdAt: Date;
  claimedAt: Date | null;
  startedAt: Date | null;
  heartbeatAt: Date | null;
  endedAt: Date | null;
}

export interface InstanceRow {
  id: string;
  type: string;
  version: string;
  capacity: Record<string, number | null>;
  pools: string[];
  executors: ExecutorType[];
  resourceDefaults: Record<string, string>;
  registeredAt: Date;
  lastSeenAt: Date;
}

export interface LogLineRow {
  seq: number;
  stream: string;
  line: string;
  ts: Date;
}

export interface ArtifactInfo {
  name: string;
  size: number;
  createdAt: Date;
}

export interface ArtifactRow extends ArtifactInfo {
  taskRunId: string;
  content: Buffer;
}

// pg hands rows over as loosely typed records; the mappers below narrow them.
type Raw = Record<string, unknown>;

const date = (v: unknown): Date => v as Date;
const dateOrNull = (v: unknown): Date | null => (v === null ? null : (v as Date));
const strOrNull = (v: unknown): string | null => (v === null ? null : String(v));
const numOrNull = (v: unknown): number | null => (v === null ? null : Number(v));

export function toTaskRunRow(r: Raw): TaskRunRow {
  return {
    id: String(r.id),
    executionId: String(r.execution_id),
    taskId: String(r.task_id),
    attempt: Number(r.attempt),
    maxAttempts: Number(r.max_attempts),
    state: r.state as TaskRunState,
    reason: r.reason as TaskRunReason | null,
    executorType: r.executor_type as ExecutorType,
    pool: String(r.pool),
    executor: r.executor as JsonObject,
    spec: r.spec as JsonObject,
    timeoutMs: Number(r.timeout_ms),
    fence: Number(r.fence),
    ownerId: strOrNull(r.owner_id),
    externalRef: strOrNull(r.external_ref),
    cancelRequested: Boolean(r.cancel_requested),
    waitingOnExecutionId: strOrNull(r.waiting_on_execution_id ?? null),
    exitCode: numOrNull(r.exit_code),
    error: strOrNull(r.error),
    availableAt: date(r.available_at),
    createdAt: date(r.created_at),
    claimedAt: dateOrNull(r.claimed_at),
    startedAt: dateOrNull(r.started_at),
    heartbeatAt: dateOrNull(r.heartbeat_at),
    endedAt: dateOrNull(r.ended_at),
  };
}

/**
 * What a claimer needs to start a task run, and all a claim returns. Shipping
 * and parsing whole rows (26 columns, six timestamps) cost more than the claim
 * itself: 16 full rows took ≈1.8 ms against ≈0.6 ms for the statement
 * (bench/README.md, peers).
 */
export type ClaimedTaskRunRow = Pick<
  TaskRunRow,
  | 'id'
  | 'executionId'
  | 'taskId'
  | 'attempt'
  | 'fence'
  | 'executorType'
  | 'pool'
  | 'executor'
  | 'spec'
  | 'timeoutMs'
>;

/** A column list such as CLAIMED_TASK_RUN_COLUMNS with each name qualified by `alias`, for statements that join. */
export function qualifiedColumns(columns: string, alias: string): string {
  return columns
    .split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ');
}

/** The columns a claim returns, in SQL (see ClaimedTaskRunRow). */
export const CLAIMED_TASK_RUN_COLUMNS =
  'id, execution_id, task_id, attempt, fence, executor_type, pool, executor, spec, timeout_ms';

export function toClaimedTaskRunRow(r: Raw): ClaimedTaskRunRow {
  return {
    id: String(r.id),
    executionId: String(r.execution_id),
    taskId: String(r.task_id),
    attempt: Number(r.attempt),
    fence: Number(r.fence),
    executorType: r.executor_type as ExecutorType,
    pool: String(r.pool),
    executor: r.executor as JsonObject,
    spec: r.spec as JsonObject,
    timeoutMs: Number(r.timeout_ms),
  };
}

/** What a completion returns: the outcome it wrote, not the whole row (same reason as ClaimedTaskRunRow). */
export type EndedTaskRunRow = Pick<
  TaskRunRow,
  'id' | 'fence' | 'state' | 'reason' | 'exitCode' | 'error' | 'endedAt'
>;

/** The columns a completion returns, in SQL (see EndedTaskRunRow). */
export const ENDED_TASK_RUN_COLUMNS = 'id, fence, state, reason, exit_code, error, ended_at';

export function toEndedTaskRunRow(r: Raw): EndedTaskRunRow {
  return {
    id: String(r.id),
    fence: Number(r.fence),
    state: r.state as TaskRunState,
    reason: r.reason as TaskRunReason | null,
    exitCode: numOrNull(r.exit_code),
    error: strOrNull(r.error),
    endedAt: dateOrNull(r.ended_at),
  };
}

export function toInstanceRow(r: Raw): InstanceRow {
  return {
    id: String(r.id),
    type: String(r.type),
    version: String(r.version),
    capacity: r.capacity as Record<string, number | null>,
    pools: (r.pools as string[] | null) ?? [],
    executors: ((r.executors as string[] | null) ?? []) as ExecutorType[],
    resourceDefaults: r.resource_defaults as Record<string, string>,
    registeredAt: date(r.registered_at),
    lastSeenAt: date(r.last_seen_at),
  };
}

export function toLogLineRow(r: Raw): LogLineRow {
  return { seq: Number(r.seq), stream: String(r.stream), line: String(r.line), ts: date(r.ts) };
}

export function toArtifactInfo(r: Raw): ArtifactInfo {
  return { name: String(r.name), size: Number(r.size), createdAt: date(r.created_at) };
}

export function toArtifactRow(r: Raw): ArtifactRow {
  return { ...toArtifactInfo(r), taskRunId: String(r.task_run_id), content: r.content as Buffer };
}
