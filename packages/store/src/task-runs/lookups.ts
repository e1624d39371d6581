import { query, type Queryable } from '../handle';
import { isUuid } from '../errors';
import { toTaskRunRow, type TaskRunRow } from '../rows';
import { isActiveByKey } from './state-conditions';

export async function getTaskRun(db: Queryable, id: string): Promise<TaskRunRow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await query(db, 'SELECT * FROM task_runs WHERE id = $1', [id]);
  return rows[0] ? toTaskRunRow(rows[0]) : null;
}

/**
 * The task run as a user of `workspace` may see it (through its execution's
 * workspace): null when there is none or it belongs to another workspace.
 */
export async function getTaskRunInWorkspace(
  db: Queryable,
  workspace: string,
  id: string,
): Promise<TaskRunRow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await query(
    db,
    `SELECT t.* FROM task_runs t JOIN executions e ON e.id = t.execution_id
     WHERE t.id = $1 AND e.workspace = $2`,
    [id, workspace],
  );
  return rows[0] ? toTaskRunRow(rows[0]) : null;
}

/** In the order tasks were queued, attempts of one task together. */
export async function listTaskRunsOfExecution(db: Queryable, executionId: string): Promise<TaskRunRow[]> {
  if (!isUuid(executionId)) return [];
  const { rows } = await query(
    db,
    'SELECT * FROM task_runs WHERE execution_id = $1 ORDER BY created_at, task_id, attempt',
    [executionId],
  );
  return rows.map(toTaskRunRow);
}

/** For an executor's cleanup after a restart: keep (adopt) only what is still STARTING/RUNNING. Unknown ids are false. */
export async function isStillRunning(db: Queryable, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const { rows } = await query(db, `SELECT 1 FROM task_runs WHERE id = $1 AND ${isActiveByKey()}`, [id]);
  return rows.length > 0;
}

/** Of the given task runs, those still active with a cancel requested: one round trip for a whole instance. */
export async function cancelRequestedAmong(db: Queryable, ids: string[]): Promise<string[]> {
  const valid = ids.filter(isUuid);
  if (valid.length === 0) return [];
  const { rows } = await query<{ id: string }>(
    db,
    `SELECT id FROM task_runs
     WHERE id = ANY($1::uuid[]) AND cancel_requested AND ${isActiveByKey()}`,
    [valid],
  );
  return rows.map((r) => r.id);
}

/** Whether a later attempt of the task was already queued (events arrive at least once). */
export async function hasLaterAttempt(
  db: Queryable,
  run: { executionId: string; taskId: string; attempt: number },
): Promise<boolean> {
  const { rowCount } = await query(
    db,
    'SELECT 1 FROM task_runs WHERE execution_id = $1 AND task_id = $2 AND attempt > $3',
    [run.executionId, run.taskId, run.attempt],
  );
  return (rowCount ?? 0) > 0;
}

/** Of `ids`, the task runs `ownerId` still holds (STARTING/RUNNING), oldest claim first. */
export async function listTaskRunsHeldBy(
  db: Queryable,
  ownerId: string,
  ids: string[],
): Promise<TaskRunRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await query(
    db,
    `SELECT * FROM task_runs
     WHERE id = ANY($1::uuid[]) AND owner_id = $2 AND ${isActiveByKey()}
     ORDER BY available_at, created_at, id`,
    [ids, ownerId],
  );
  return rows.map(toTaskRunRow);
}
