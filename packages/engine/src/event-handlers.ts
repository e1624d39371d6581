import type { PoolClient } from 'pg';
import { getOutputsOfExecution, getTaskRun, isActiveByKey, setOutputs, toTaskRunRow } from '@sluice/store';
import { emitEvent, type PendingEvent } from './events';
import { afterTaskRunEnded, type ProgressEffects } from './progress';
import type { EngineSettings } from './settings';
import { getExecution, lockExecution } from './sql/executions';

/**
 * A child execution ended: its parked parent task run ends the same way
 * (SUCCEEDED / FAILED / CANCELLED), with the child's id, state and outputs
 * (`<task>.<key>`) as its outputs.
 */
async function resumeSubflowParent(tx: PoolClient, childId: string, effects: ProgressEffects): Promise<void> {
  const child = await getExecution(tx, childId);
  if (!child?.parentTaskRunId) return;
  const parent = await getTaskRun(tx, child.parentTaskRunId);
  if (!parent) return;
  await lockExecution(tx, parent.executionId);
  const state =
    child.state === 'SUCCEEDED' ? 'SUCCEEDED' : child.state === 'CANCELLED' ? 'CANCELLED' : 'FAILED';
  const reason = state === 'SUCCEEDED' ? null : state === 'CANCELLED' ? 'cancelled' : 'error';
  const ended = await tx.query(
    `UPDATE task_runs SET state = $3, reason = $4, error = $5, ended_at = now(), waiting_on_execution_id = NULL
     WHERE id = $1 AND waiting_on_execution_id = $2 AND ${isActiveByKey()}
     RETURNING *`,
    [
      parent.id,
      childId,
      state,
      reason,
      state === 'SUCCEEDED' ? null : `subflow execution ${childId} ended ${child.state}`,
    ],
  );
  const row = ended.rows[0];
  if (!row) return; // already resumed by an earlier delivery, or cancelled meanwhile
  const childOutputs = await getOutputsOfExecution(tx, childId);
  const outputs: Record<string, string> = { executionId: childId, state: child.state };
  for (const [task, values] of Object.entries(childOutputs)) {
    for (const [key, value] of Object.entries(values)) outputs[`${task}.${key}`] = value;
  }
  const resumed = toTaskRunRow(row as Record<string, unknown>);
  await setOutputs(tx, { taskRunId: resumed.id, fence: resumed.fence, outputs });
  await emitEvent(tx, { kind: 'task_run.ended', payload: { taskRunId: resumed.id } });
  effects.eventsEmitted = true;
}

/** Handles one event inside the consumer's transaction. Every handler is idempotent. */
export async function handleEvent(
  tx: PoolClient,
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
