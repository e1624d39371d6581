import {
  findChildExecutionId,
  getTaskRun,
  lockExecution,
  parkOnChildExecution,
  type Transaction,
} from '@sluice/store';
import { StaleFenceError, type StartSubflowRequest } from '@sluice/protocol';
import { createExecutionIn } from './create-execution';
import { NotFoundError } from './errors';
import type { ProgressEffects } from './progress';
import type { EngineSettings } from './settings';

/**
 * Starts the child execution of a subflow task run, once: a repeated call
 * (a retried request) answers the child it already started. With `wait`, the
 * task run is parked on the child (RUNNING, no heartbeat needed) until the
 * child's end resumes it.
 */
export async function startSubflowIn(
  tx: Transaction,
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
  const existing = await findChildExecutionId(tx, parent.id);
  if (existing) return { executionId: existing };
  if (parent.fence !== req.fence || (parent.state !== 'STARTING' && parent.state !== 'RUNNING')) {
    throw new StaleFenceError(req.taskRunId, req.fence);
  }
  // A flow reference names a namespace at most, never a workspace: the child
  // runs in the parent's workspace, and a flow of another one cannot be started.
  const [namespace, flowId] = req.flow.includes('/')
    ? (req.flow.split('/', 2) as [string, string])
    : [parentExecution.namespace, req.flow];
  const child = await createExecutionIn(
    tx,
    {
      workspace: parentExecution.workspace,
      namespace,
      flowId,
      trigger: 'subflow',
      parentTaskRunId: parent.id,
      inputs: req.inputs,
    },
    settings,
    effects,
  );
  if (!child) throw new Error(`subflow ${namespace}/${flowId}: execution was not created`);
  if (req.wait) {
    await parkOnChildExecution(tx, { taskRunId: parent.id, fence: req.fence, childExecutionId: child.id });
  }
  return { executionId: child.id };
}
