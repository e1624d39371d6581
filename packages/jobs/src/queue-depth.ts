import { countQueuedByPool, type Queryable } from '@sluice/store';
import type { Metrics } from '@sluice/observability';

/**
 * Sets sluice_queue_depth{pool,executor_type} from the queued task runs.
 * The gauge is reset first so a pool whose queue emptied reads nothing rather
 * than its last count; reset and set happen in one tick, so no scrape sees
 * the gap.
 */
export async function sampleQueueDepth(db: Queryable, gauge: Metrics['queueDepth']): Promise<void> {
  const rows = await countQueuedByPool(db);
  gauge.reset();
  for (const row of rows) gauge.set({ pool: row.pool, executor_type: row.executorType }, row.n);
}
