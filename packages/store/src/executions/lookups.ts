import { query, type Queryable, type TransactionScope } from '../handle';
import { isUuid } from '../errors';
import { toExecutionRecord, type ExecutionDbRow, type ExecutionRecord } from './rows';

export async function getExecution(db: Queryable, id: string): Promise<ExecutionRecord | null> {
  const r = await query<ExecutionDbRow>(db, 'SELECT * FROM executions WHERE id = $1', [id]);
  return r.rows[0] ? toExecutionRecord(r.rows[0]) : null;
}

/**
 * The execution as a user of `workspace` may see it: null when there is none
 * or it belongs to another workspace, so the caller cannot tell the two apart.
 */
export async function getExecutionInWorkspace(
  db: Queryable,
  workspace: string,
  id: string,
): Promise<ExecutionRecord | null> {
  if (!isUuid(id)) return null;
  const r = await query<ExecutionDbRow>(db, 'SELECT * FROM executions WHERE id = $1 AND workspace = $2', [
    id,
    workspace,
  ]);
  return r.rows[0] ? toExecutionRecord(r.rows[0]) : null;
}

/** Serialises every state change of one execution: dependents are queued exactly once. */
export async function lockExecution(tx: TransactionScope, id: string): Promise<ExecutionRecord | null> {
  const r = await query<ExecutionDbRow>(tx, 'SELECT * FROM executions WHERE id = $1 FOR UPDATE', [id]);
  return r.rows[0] ? toExecutionRecord(r.rows[0]) : null;
}

/** The child execution a subflow task run started, if it started one. */
export async function findChildExecutionId(db: Queryable, parentTaskRunId: string): Promise<string | null> {
  const r = await query<{ id: string }>(db, 'SELECT id FROM executions WHERE parent_task_run_id = $1', [
    parentTaskRunId,
  ]);
  return r.rows[0]?.id ?? null;
}
