import type { ExecutionState } from '@sluice/protocol';
import type { ExecutorBlock, Flow } from '@sluice/flows';

/**
 * What an execution pins at creation: the validated flow and the namespace's
 * executor defaults, so later edits of either do not change a running execution.
 */
export interface ExecutionDefinition {
  flow: Flow;
  namespaceExecutor: ExecutorBlock | null;
}

export interface ExecutionRecord {
  id: string;
  /** Its flow's workspace (docs/decisions.md §12). */
  workspace: string;
  namespace: string;
  flowId: string;
  snapshotId: string | null;
  definition: ExecutionDefinition;
  state: ExecutionState;
  reason: string | null;
  trigger: string;
  scheduledFor: Date | null;
  cancelRequested: boolean;
  /** Set on a subflow's child execution. */
  parentTaskRunId: string | null;
  inputs: Record<string, unknown> | null;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
}

/** An executions row as pg returns it. */
export interface ExecutionDbRow {
  id: string;
  workspace: string;
  namespace: string;
  flow_id: string;
  snapshot_id: string | null;
  definition: ExecutionDefinition;
  state: ExecutionState;
  reason: string | null;
  trigger: string;
  scheduled_for: Date | null;
  cancel_requested: boolean;
  parent_task_run_id: string | null;
  inputs: Record<string, unknown> | null;
  created_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
}

export function toExecutionRecord(r: ExecutionDbRow): ExecutionRecord {
  return {
    id: r.id,
    workspace: r.workspace,
    namespace: r.namespace,
    flowId: r.flow_id,
    snapshotId: r.snapshot_id,
    definition: r.definition,
    state: r.state,
    reason: r.reason,
    trigger: r.trigger,
    scheduledFor: r.scheduled_for,
    cancelRequested: r.cancel_requested,
    parentTaskRunId: r.parent_task_run_id,
    inputs: r.inputs,
    createdAt: r.created_at,
    startedAt: r.started_at,
    endedAt: r.ended_at,
  };
}
