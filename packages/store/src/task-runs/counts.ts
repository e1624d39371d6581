import { query, type Queryable } from '../handle';
import type { ExecutorType } from '@sluice/protocol';

/** Queued task runs per (pool, executor type): what sluice_queue_depth reports. */
export async function countQueuedByPool(
  db: Queryable,
): Promise<Array<{ pool: string; executorType: ExecutorType; n: number }>> {
  const r = await query<{ pool: string; executorType: ExecutorType; n: number }>(
    db,
    `SELECT pool, executor_type AS "executorType", count(*)::int AS n
     FROM task_runs WHERE state = 'QUEUED' GROUP BY pool, executor_type`,
  );
  return r.rows;
}

/** Queued, starting and running task runs, counted only up to `limit` (cheap with a big backlog). */
export async function countActiveTaskRunsUpTo(db: Queryable, limit: number): Promise<number> {
  const r = await query<{ n: number }>(
    db,
    // Two counts, each matching one partial index (task_runs_claim_idx,
    // task_runs_active_idx): one IN over all three states matches neither
    // and would scan the whole history.
    `SELECT least($1::int,
              (SELECT count(*) FROM (SELECT 1 FROM task_runs WHERE state = 'QUEUED' LIMIT $1) q)
            + (SELECT count(*) FROM (SELECT 1 FROM task_runs WHERE state IN ('STARTING', 'RUNNING') LIMIT $1) a)
           )::int AS n`,
    [limit],
  );
  return r.rows[0]?.n ?? 0;
}
