import { randomUUID } from 'node:crypto';
import type { ExecutorType } from '@sluice/protocol';
import { query, type Queryable } from '../handle';
import { toTaskRunRow, type JsonObject, type TaskRunRow } from '../rows';

/** Channel notified (on commit) whenever a task run is queued; payload `{"executorType","pool"}`. */
export const TASK_RUN_QUEUED_CHANNEL = 'sluice_task_run_queued';

export interface NewTaskRun {
  /** Generated when omitted. */
  id?: string;
  executionId: string;
  taskId: string;
  /** 1 for the first attempt; a retry is a new task run with attempt + 1. */
  attempt: number;
  maxAttempts: number;
  executorType: ExecutorType;
  /** Ignored for inline task runs, which are stored with pool ''. */
  pool: string;
  executor: JsonObject;
  spec: JsonObject;
  timeoutMs: number;
  /** Not claimable before this (retry backoff); default now. */
  availableAt?: Date;
}

// The INSERT and the NOTIFY are one statement, so a task run and its wake-up
// commit (or roll back) together with the caller's transaction. Instances
// LISTEN on the channel and poll at once instead of waiting for their poll
// interval (docs/decisions.md §4); a lost notification only costs that wait.
const INSERT_SQL = `
WITH ins AS (
  INSERT INTO task_runs (id, execution_id, task_id, attempt, max_attempts, state, executor_type, pool,
                         executor, spec, timeout_ms, available_at)
  VALUES ($1, $2, $3, $4, $5, 'QUEUED', $6, $7, $8, $9, $10, coalesce($11, now()))
  RETURNING *
)
SELECT ins.*, pg_notify('${TASK_RUN_QUEUED_CHANNEL}',
                        json_build_object('executorType', ins.executor_type, 'pool', ins.pool)::text) AS _notified
FROM ins`;

export async function insertTaskRun(db: Queryable, run: NewTaskRun): Promise<TaskRunRow> {
  if (!Number.isInteger(run.attempt) || run.attempt < 1) {
    throw new Error(`insertTaskRun: attempt must be a positive integer, got ${run.attempt}`);
  }
  if (!Number.isInteger(run.timeoutMs) || run.timeoutMs < 1) {
    throw new Error(`insertTaskRun: timeoutMs must be a positive integer, got ${run.timeoutMs}`);
  }
  const { rows } = await query(db, INSERT_SQL, [
    run.id ?? randomUUID(),
    run.executionId,
    run.taskId,
    run.attempt,
    run.maxAttempts,
    run.executorType,
    run.executorType === 'inline' ? '' : run.pool,
    JSON.stringify(run.executor),
    JSON.stringify(run.spec),
    run.timeoutMs,
    run.availableAt ?? null,
  ]);
  return toTaskRunRow(rows[0] as Record<string, unknown>);
}
