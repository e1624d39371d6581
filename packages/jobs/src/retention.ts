import type { Pool } from 'pg';
import { type JobsLog } from './log';
import { startPeriodic } from './periodic';

/** Idempotency records of executor claims: a retried claim arrives within seconds, so an hour is ample. */
export const EXECUTOR_CLAIM_RETENTION_MS = 60 * 60 * 1000;

export const DEFAULT_RETENTION_BATCH_SIZE = 1000;

export interface RetentionOptions {
  pool: Pool;
  /** SLUICE_RETENTION; 0 keeps execution data and events forever (claim records are still cleaned). */
  retentionMs: number;
  /** Rows one DELETE removes at most, so no statement holds locks for long. Default 1000. */
  batchSize?: number;
  /** Defaults to the database's clock. */
  now?: Date;
  /** Aborting stops between two batches (shutdown); what was deleted so far stays deleted. */
  signal?: AbortSignal;
}

/** Rows deleted, per kind. */
export interface RetentionResult {
  logs: number;
  outputs: number;
  metrics: number;
  artifacts: number;
  events: number;
  executorClaims: number;
}

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

/** One statement per batch, each deleting at most $2 rows older than the cutoff $1. */
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
} as const satisfies Record<keyof RetentionResult, string>;

async function deleteInBatches(
  pool: Pool,
  sql: string,
  cutoff: Date,
  batchSize: number,
  signal?: AbortSignal,
): Promise<number> {
  let total = 0;
  while (!signal?.aborted) {
    const deleted = (await pool.query(sql, [cutoff, batchSize])).rowCount ?? 0;
    total += deleted;
    if (deleted < batchSize) break;
  }
  return total;
}

/**
 * One retention pass: deletes, batch by batch, the logs, outputs, metrics and
 * artifacts of task runs whose execution ended more than `retentionMs` ago,
 * processed events older than that, and executor claim records older than an
 * hour. Execution and task run rows stay (the history remains listable).
 */
export async function runRetention(options: RetentionOptions): Promise<RetentionResult> {
  const batchSize = options.batchSize ?? DEFAULT_RETENTION_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new Error(`runRetention: batchSize must be a positive integer, got ${batchSize}`);
  }
  const now =
    options.now ??
    (await options.pool.query<{ now: Date }>('SELECT now() AS now')).rows[0]?.now ??
    new Date();
  const result: RetentionResult = {
    logs: 0,
    outputs: 0,
    metrics: 0,
    artifacts: 0,
    events: 0,
    executorClaims: 0,
  };
  const run = async (kind: keyof RetentionResult, cutoff: Date) => {
    result[kind] = await deleteInBatches(
      options.pool,
      BATCH_DELETES[kind],
      cutoff,
      batchSize,
      options.signal,
    );
  };
  if (options.retentionMs > 0) {
    const cutoff = new Date(now.getTime() - options.retentionMs);
    for (const kind of ['logs', 'outputs', 'metrics', 'artifacts', 'events'] as const)
      await run(kind, cutoff);
  }
  await run('executorClaims', new Date(now.getTime() - EXECUTOR_CLAIM_RETENTION_MS));
  return result;
}

export interface RetentionScheduleOptions extends Omit<RetentionOptions, 'now' | 'signal'> {
  /** Between passes, e.g. 10 minutes. */
  intervalMs: number;
  /** Before the first pass, so a starting process gets on its feet first. Default 30 s. */
  firstDelayMs?: number;
  log: JobsLog;
  onPass?: (result: RetentionResult) => void;
}

/** Runs retention every interval; stop() interrupts a pass between batches and waits for it. */
export function startRetention(options: RetentionScheduleOptions): () => Promise<void> {
  const abort = new AbortController();
  const stop = startPeriodic({
    name: 'retention',
    intervalMs: options.intervalMs,
    firstDelayMs: options.firstDelayMs ?? 30_000,
    log: options.log,
    run: async () => {
      const result = await runRetention({ ...options, signal: abort.signal });
      options.onPass?.(result);
      if (Object.values(result).some((n) => n > 0)) options.log.info('retention pass', { ...result });
    },
  });
  return async () => {
    abort.abort();
    await stop();
  };
}
