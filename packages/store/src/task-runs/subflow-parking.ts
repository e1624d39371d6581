import type { TaskRunReason } from '@sluice/protocol';
import { query, type TransactionScope } from '../handle';
import { toTaskRunRow, type TaskRunRow } from '../rows';
import { isActiveByKey } from './state-conditions';

/**
 * Parks a subflow task run on its child execution: RUNNING with no heartbeat
 * needed, until the child's end resumes it. Fenced: a stale fence parks nothing.
 */
export async function parkOnChildExecution(
  tx: TransactionScope,
  ref: { taskRunId: string; fence: number; childExecutionId: string },
): Promise<void> {
  await query(
    tx,
    `UPDATE task_runs SET waiting_on_execution_id = $3, state = 'RUNNING', started_at = coalesce(started_at, now())
     WHERE id = $1 AND fence = $2`,
    [ref.taskRunId, ref.fence, ref.childExecutionId],
  );
}

/**
 * Ends a task run parked on `childExecutionId` the way its child ended. Null
 * when it is no longer parked on it (resumed by an earlier delivery, or
 * cancelled meanwhile).
 */
export async function resumeParkedTaskRun(
  tx: TransactionScope,
  resume: {
    taskRunId: string;
    childExecutionId: string;
    state: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
    reason: TaskRunReason | null;
    error: string | null;
  },
): Promise<TaskRunRow | null> {
  const { rows } = await query(
    tx,
    `UPDATE task_runs SET state = $3, reason = $4, error = $5, ended_at = now(), waiting_on_execution_id = NULL
     WHERE id = $1 AND waiting_on_execution_id = $2 AND ${isActiveByKey()}
     RETURNING *`,
    [resume.taskRunId, resume.childExecutionId, resume.state, resume.reason, resume.error],
  );
  return rows[0] ? toTaskRunRow(rows[0]) : null;
}

/** Child executions that parked task runs of this execution wait for (cancel reaches them too). */
export async function listWaitedOnChildren(tx: TransactionScope, executionId: string): Promise<string[]> {
  const { rows } = await query<{ id: string }>(
    tx,
    `SELECT waiting_on_execution_id AS id FROM task_runs
     WHERE execution_id = $1 AND waiting_on_execution_id IS NOT NULL AND ${isActiveByKey()}`,
    [executionId],
  );
  return rows.map((row) => row.id);
}
