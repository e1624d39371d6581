import {
  emitEvent,
  getExecution,
  getOutputsOfExecution,
  getTaskRun,
  lockExecution,
  resumeParkedTaskRun,
  setOutputs,
  type PendingEvent,
  type Transaction,
} from '@sluice/store';
import { afterTaskRunEnded, type ProgressEffects } from './progress';
import type { EngineSettings } from './settings';

/**
 * A child execution ended: its parked parent task run ends the same way
 * (SUCCEEDED / FAILED / CANCELLED), with the child's id, state and outputs
 * (`<task>.<key>`) as its outputs.
 */
async function resumeSubflowParent(
  tx: Transaction,
  childId: string,
  effects: ProgressEffects,
): Promise<void> {
  const child = await getExecution(tx, childId);
  if (!child?.parentTaskRunId) return;
  const parent = await getTaskRun(tx, child.parentTaskRunId);
  if (!parent) return;
  await lockExecution(tx, parent.executionId);
  const state =
    child.state === 'SUCCEEDED' ? 'SUCCEEDED' : child.state === 'CANCELLED' ? 'CANCELLED' : 'FAILED';
  const reason = state === 'SUCCEEDED' ? null : state === 'CANCELLED' ? 'cancelled' : 'error';
  const resumed = await resumeParkedTaskRun(tx, {
    taskRunId: parent.id,
    childExecutionId: childId,
    state,
    reason,
    error: state === 'SUCCEEDED' ? null : `subflow execution ${childId} ended ${child.state}`,
  });
  if (!resumed) return; // already resumed by an earlier delivery, or cancelled meanwhile
  const childOutputs = await getOutputsOfExecution(tx, childId);
  const outputs: Record<string, string> = { executionId: childId, state: child.state };
  for (const [task, values] of Object.entries(childOutputs)) {
    for (const [key, value] of Object.entries(values)) outputs[`${task}.${key}`] = value;
  }
  await setOutputs(tx, { taskRunId: resumed.id, fence: resumed.fence, outputs });
  await emitEvent(tx, { kind: 'task_run.ended', payload: { taskRunId: resumed.id } });
  effects.eventsEmitted = true;
}

/** Handles one event inside the consumer's transaction. Every handler is idempotent. */
export async function handleEvent(
  tx: Transaction,
  event: PendingEvent,
  settings: EngineSettings,
  effects: ProgressEffects,
): Promise<void> {
  switch (event.kind) {
    case 'task_run.ended': {
      const run = await getTaskRun(tx, String(event.payload.taskRunId));
      if (run) await afterTaskRunEnded(tx, run, settings, effects);
      return;
    }
    case 'execution.ended':
      await resumeSubflowParent(tx, String(event.payload.executionId), effects);
      return;
    default:
      throw new Error(`unknown event kind ${event.kind}`);
  }
}
