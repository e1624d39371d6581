import { StaleFenceError, type TaskRunReason } from '@sluice/protocol';
import { query, type Queryable } from '../db';
import { assertTaskRunId, TaskRunNotFoundError } from '../errors';
import { toTaskRunRow, type TaskRunRow } from '../rows';
import { currentTaskRun } from './fence';
import type { FencedRef } from './start';

export interface CompleteTaskRun extends FencedRef {
  state: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  reason?: TaskRunReason | null;
  exitCode?: number | null;
  error?: string | null;
}

export type CompleteResult = { applied: true; row: TaskRunRow } | { applied: false; row: TaskRunRow };

/**
 * The holder ends its task run (DESIGN.md point 8):
 * - fence current and the run active → the terminal state is written;
 * - fence current but the run already ended → applied: false, nothing
 *   changes: the holder repeated its own call (its first answer got lost);
 * - any other fence → StaleFenceError: someone else ended it (watchdog,
 *   shutdown, cancel), and those always bump the fence.
 */
export async function completeTaskRun(db: Queryable, req: CompleteTaskRun): Promise<CompleteResult> {
  assertTaskRunId(req.taskRunId);
  const { rows } = await query(
    db,
    `UPDATE task_runs
     SET state = $3, reason = $4, exit_code = $5, error = $6, ended_at = now()
     WHERE id = $1 AND fence = $2 AND state IN ('STARTING', 'RUNNING')
     RETURNING *`,
    [req.taskRunId, req.fence, req.state, req.reason ?? null, req.exitCode ?? null, req.error ?? null],
  );
  if (rows[0]) return { applied: true, row: toTaskRunRow(rows[0]) };

  const row = await currentTaskRun(db, req.taskRunId);
  if (!row) throw new TaskRunNotFoundError(req.taskRunId);
  if (row.fence === req.fence && row.endedAt !== null) return { applied: false, row };
  throw new StaleFenceError(req.taskRunId, req.fence);
}
