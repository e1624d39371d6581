import { databaseNow, deleteExpiredBatch, type RetentionKind, type Store } from '@sluice/store';
import { type JobsLog } from './log';
import { startPeriodic } from './periodic';

/** Idempotency records of executor claims: a retried claim arrives within seconds, so an hour is ample. */
export const EXECUTOR_CLAIM_RETENTION_MS = 60 * 60 * 1000;

export const DEFAULT_RETENTION_BATCH_SIZE = 1000;

export interface RetentionOptions {
  store: Store;
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
export interface RetentionResult extends Record<RetentionKind, number> {
  logs: number;
  outputs: number;
  metrics: number;
  artifacts: number;
  events: number;
  executorClaims: number;
}

async function deleteInBatches(
  store: Store,
  kind: RetentionKind,
  cutoff: Date,
  batchSize: number,
  signal?: AbortSignal,
): Promise<number> {
  let total = 0;
  while (!signal?.aborted) {
    const deleted = await deleteExpiredBatch(store, kind, cutoff, batchSize);
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
  const now = options.now ?? (await databaseNow(options.store));
  const result: RetentionResult = {
    logs: 0,
    outputs: 0,
    metrics: 0,
    artifacts: 0,
    events: 0,
    executorClaims: 0,
  };
  const run = async (kind: keyof RetentionResult, cutoff: Date) => {
    result[kind] = await deleteInBatches(options.store, kind, cutoff, batchSize, options.signal);
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
