import { StaleFenceError } from '@sluice/protocol';
import { query, type Queryable } from '../handle';
import { TaskRunNotFoundError } from '../errors';
import { toTaskRunRow, type TaskRunRow } from '../rows';

/**
 * Fenced writes are single conditional statements (`... WHERE id = $1 AND
 * fence = $2 ...`) so the happy path is one round trip. Only when such a
 * statement matched nothing do we look at the row to say why.
 */
export async function currentTaskRun(db: Queryable, taskRunId: string): Promise<TaskRunRow | null> {
  const { rows } = await query(db, 'SELECT * FROM task_runs WHERE id = $1', [taskRunId]);
  return rows[0] ? toTaskRunRow(rows[0]) : null;
}

/** Throws the error that explains why a fenced write of `fence` to `taskRunId` was refused. */
export async function refuseWrite(db: Queryable, taskRunId: string, fence: number): Promise<never> {
  const row = await currentTaskRun(db, taskRunId);
  if (!row) throw new TaskRunNotFoundError(taskRunId);
  throw new StaleFenceError(taskRunId, fence);
}

/**
 * A CTE that locks the task run FOR SHARE when `fence` is current. Writes to
 * child tables (logs, outputs, metrics, artifacts) join it: a concurrent fence
 * bump (watchdog, shutdown, cancel) either waits for our insert to commit or,
 * if it committed first, makes this CTE empty — a zombie's write never lands
 * after it was fenced off. Parameters: $1 task run id, $2 fence.
 */
export const FENCED_TASK_RUN_CTE =
  'fenced AS (SELECT id FROM task_runs WHERE id = $1 AND fence = $2 FOR SHARE)';
