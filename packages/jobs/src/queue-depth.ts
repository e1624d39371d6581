import type { Pool } from 'pg';
import type { Metrics } from '@sluice/observability';

/**
 * Sets sluice_queue_depth{pool,executor_type} from the queued task runs.
 * The gauge is reset first so a pool whose queue emptied reads nothing rather
 * than its last count; reset and set happen in one tick, so no scrape sees
 * the gap.
 */
export async function sampleQueueDepth(pool: Pool, gauge: Metrics['queueDepth']): Promise<void> {
  const r = await pool.query<{ pool: string; executorType: string; n: number }>(
    `SELECT pool, executor_type AS "executorType", count(*)::int AS n
     FROM task_runs WHERE state = 'QUEUED' GROUP BY pool, executor_type`,
  );
  gauge.reset();
  for (const row of r.rows) gauge.set({ pool: row.pool, executor_type: row.executorType }, row.n);
}
