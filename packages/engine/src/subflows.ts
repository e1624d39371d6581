import type { PoolClient } from 'pg';
import { getTaskRun, isActiveByKey } from '@sluice/store';
import { StaleFenceError, type StartSubflowRequest } from '@sluice/protocol';
import { createExecutionIn } from './create-execution';
import { NotFoundError } from './errors';
import type { ProgressEffects } from './progress';
import type { EngineSettings } from './settings';
import { lockExecution } from './sql/executions';

/**
 * Starts the child execution of a subflow task run, once: a repeated call
 * (a retried request) answers the child it already started. With `wait`, the
 * task run is parked on the child (RUNNING, no heartbeat needed) until the
 * child's end resumes it.
 */
export async function startSubflowIn(
  tx: PoolClient,
  req: Required<Pick<StartSubflowRequest, 'taskRunId' | 'fence' | 'flow' | 'wait'>> & {
    inputs: Record<string, unknown>;
  },
  settings: EngineSettings,
  effects: ProgressEffects,
): Promise<{ executionId: string }> {
  const parent = await getTaskRun(tx, req.taskRunId);
  if (!parent) throw new NotFoundError(`task run ${req.taskRunId}`);
  const parentExecution = await lockExecution(tx, parent.executionId);
  if (!parentExecution) throw new NotFoundError(`execution ${parent.executionId}`);
  const existing = await tx.query<{ id: string }>('SELECT id FROM executions WHERE parent_task_run_id = $1', [
    parent.id,
  ]);
  if (existing.rows[0]) return { executionId: existing.rows[0].id };
  if (parent.fence !== req.fence || (parent.state !== 'STARTING' && parent.state !== 'RUNNING')) {
    throw new StaleFenceError(req.taskRunId, req.fence);
  }
  const [namespace, flowId] = req.flow.includes('/')
    ? (req.flow.split('/', 2) as [string, string])
    : [parentExecution.namespace, req.flow];
  const child = await createExecutionIn(
    tx,
    { namespace, flowId, trigger: 'subflow', parentTaskRunId: parent.id, inputs: req.inputs },
    settings,
    effects,
  );
  if (!child) throw new Error(`subflow ${namespace}/${flowId}: execution was not created`);
  if (req.wait) {
    await tx.query(
      `UPDATE task_runs SET waiting_on_execution_id = $3, state = 'RUNNING', started_at = coalesce(started_at, now())
       WHERE id = $1 AND fence = $2`,
      [parent.id, req.fence, child.id],
    );
  }
  return { executionId: child.id };
}

/** Child executions that parked task runs of this execution wait for (cancel reaches them too). */
export async function waitedOnChildren(tx: PoolClient, executionId: string): Promise<string[]> {
  const r = await tx.query<{ id: string }>(
    `SELECT waiting_on_execution_id AS id FROM task_runs
     WHERE execution_id = $1 AND waiting_on_execution_id IS NOT NULL AND ${isActiveByKey()}`,
    [executionId],
  );
  return r.rows.map((row) => row.id);
}
