import { query, type Queryable } from '../handle';
import { isUuid } from '../errors';
import { toTaskRunRow, type TaskRunRow } from '../rows';
import { isActiveByKey, isQueuedByKey } from './state-conditions';

// Everything here ends task runs on behalf of someone other than the holder,
// and so bumps the fence: a holder that is still alive finds its later writes
// refused instead of overwriting the ending.

/**
 * Cancels the execution's task runs nobody has claimed yet. A claim that
 * holds a row at this moment wins (the UPDATE waits for it and then sees
 * STARTING): call requestCancel afterwards to reach those.
 */
export async function cancelQueuedTaskRuns(db: Queryable, executionId: string): Promise<TaskRunRow[]> {
  if (!isUuid(executionId)) return [];
  const { rows } = await query(
    db,
    `UPDATE task_runs
     SET state = 'CANCELLED', reason = 'cancelled', fence = fence + 1, ended_at = now()
     WHERE execution_id = $1 AND ${isQueuedByKey()}
     RETURNING *`,
    [executionId],
  );
  return rows.map(toTaskRunRow);
}

/**
 * Flags the execution's active task runs; their holders learn it from the
 * next heartbeat (or cancelRequestedAmong) and stop the work, then complete
 * with CANCELLED themselves. Returns the flagged ids.
 */
export async function requestCancel(db: Queryable, executionId: string): Promise<string[]> {
  if (!isUuid(executionId)) return [];
  const { rows } = await query<{ id: string }>(
    db,
    `UPDATE task_runs SET cancel_requested = true
     WHERE execution_id = $1 AND ${isActiveByKey()}
     RETURNING id`,
    [executionId],
  );
  return rows.map((r) => r.id);
}
