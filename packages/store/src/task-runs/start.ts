import { query, type Queryable } from '../handle';
import { assertTaskRunId } from '../errors';
import { toTaskRunRow, type TaskRunRow } from '../rows';
import { refuseWrite } from './fence';
import { isActiveByKey } from './state-conditions';

export interface FencedRef {
  taskRunId: string;
  fence: number;
}

/**
 * STARTING → RUNNING, when the runner reports the task command started.
 * Repeating it while RUNNING is a no-op that keeps the first started_at (the
 * runner retries calls whose answer it lost). Anything else throws
 * StaleFenceError.
 */
export async function markRunning(db: Queryable, ref: FencedRef): Promise<TaskRunRow> {
  assertTaskRunId(ref.taskRunId);
  const { rows } = await query(
    db,
    `UPDATE task_runs
     SET state = 'RUNNING',
         started_at = CASE WHEN state = 'STARTING' THEN now() ELSE started_at END,
         heartbeat_at = now()
     WHERE id = $1 AND fence = $2 AND ${isActiveByKey()}
     RETURNING *`,
    [ref.taskRunId, ref.fence],
  );
  if (!rows[0]) return refuseWrite(db, ref.taskRunId, ref.fence);
  return toTaskRunRow(rows[0]);
}

/** Keeps the executor's handle on the work (pid, container ID, Job name) for cancel, cleanup and the API. */
export async function recordExternalRef(
  db: Queryable,
  ref: FencedRef & { externalRef: string | null },
): Promise<void> {
  assertTaskRunId(ref.taskRunId);
  const { rowCount } = await query(
    db,
    `UPDATE task_runs SET external_ref = $3
     WHERE id = $1 AND fence = $2 AND ${isActiveByKey()}`,
    [ref.taskRunId, ref.fence, ref.externalRef],
  );
  if (!rowCount) await refuseWrite(db, ref.taskRunId, ref.fence);
}
