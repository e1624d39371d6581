import { query, type Queryable } from '../handle';

/** What a retention pass deletes, one kind per statement. */
export type RetentionKind = 'logs' | 'outputs' | 'metrics' | 'artifacts' | 'events' | 'executorClaims';

/*
 * Task runs whose data may go: their execution ended before the cutoff ($1),
 * they ended themselves, and the execution is not the child of a subflow task
 * run that is still waiting on it. Nothing of a running execution qualifies.
 */
const EXPIRED_TASK_RUNS = `
  SELECT tr.id FROM executions e
  JOIN task_runs tr ON tr.execution_id = e.id
  WHERE e.ended_at < $1
    AND e.state IN ('SUCCEEDED', 'FAILED', 'CANCELLED')
    AND tr.state IN ('SUCCEEDED', 'FAILED', 'CANCELLED')
    AND NOT EXISTS (
      SELECT 1 FROM task_runs parent
      WHERE parent.id = e.parent_task_run_id AND parent.state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED'))`;

/** DELETE of one batch of a task run table's rows, by its primary key `key`; $1 is the cutoff, $2 the batch size. */
function taskRunDataDelete(table: string, key: string[]): string {
  return `DELETE FROM ${table} WHERE (${key.join(', ')}) IN (
            SELECT ${key.map((column) => `d.${column}`).join(', ')}
            FROM (${EXPIRED_TASK_RUNS}) expired JOIN ${table} d ON d.task_run_id = expired.id
            LIMIT $2)`;
}

/** One statement per kind, each deleting at most $2 rows older than the cutoff $1 (built once, at load). */
const BATCH_DELETES = {
  logs: taskRunDataDelete('task_run_logs', ['task_run_id', 'seq']),
  outputs: taskRunDataDelete('task_run_outputs', ['task_run_id', 'key']),
  metrics: taskRunDataDelete('task_run_metrics', ['id']),
  artifacts: taskRunDataDelete('artifacts', ['task_run_id', 'name']),
  // Processed events only: a parked (never processed) event stays for diagnosis.
  events: `DELETE FROM events WHERE id IN (
             SELECT id FROM events WHERE processed_at < $1 LIMIT $2)`,
  executorClaims: `DELETE FROM executor_claims WHERE (instance_id, idempotency_key) IN (
                     SELECT instance_id, idempotency_key FROM executor_claims WHERE created_at < $1 LIMIT $2)`,
} as const satisfies Record<RetentionKind, string>;

/**
 * Deletes at most `batchSize` rows of `kind` older than `cutoff` (for task run
 * data: of task runs whose execution ended before it); answers how many.
 * One short statement, so no batch holds locks for long.
 */
export async function deleteExpiredBatch(
  db: Queryable,
  kind: RetentionKind,
  cutoff: Date,
  batchSize: number,
): Promise<number> {
  return (await query(db, BATCH_DELETES[kind], [cutoff, batchSize])).rowCount ?? 0;
}

/** The database's clock: the one clock every replica shares. */
export async function databaseNow(db: Queryable): Promise<Date> {
  return (await query<{ now: Date }>(db, 'SELECT now() AS now')).rows[0]?.now ?? new Date();
}
