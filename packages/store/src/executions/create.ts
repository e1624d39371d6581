import { query, type Queryable } from '../handle';
import {
  toExecutionRecord,
  type ExecutionDbRow,
  type ExecutionDefinition,
  type ExecutionRecord,
} from './rows';
import type { NamespaceKey } from '../workspaces';

export interface NewExecution extends NamespaceKey {
  id: string;
  flowId: string;
  snapshotId: string;
  definition: ExecutionDefinition;
  trigger: string;
  scheduledFor: Date | null;
  parentTaskRunId: string | null;
  inputs: Record<string, unknown> | null;
}

/** Inserts a QUEUED execution; null when a scheduled one for the same due time exists. */
export async function insertExecution(db: Queryable, e: NewExecution): Promise<ExecutionRecord | null> {
  // A scheduled execution is unique per due time: a second scheduler cycle for
  // the same time inserts nothing and answers null.
  const r = await query<ExecutionDbRow>(
    db,
    `INSERT INTO executions (id, workspace, namespace, flow_id, snapshot_id, definition, state, trigger,
                             scheduled_for, parent_task_run_id, inputs)
     VALUES ($1, $2, $3, $4, $5, $6, 'QUEUED', $7, $8, $9, $10)
     ON CONFLICT (workspace, namespace, flow_id, scheduled_for) DO NOTHING
     RETURNING *`,
    [
      e.id,
      e.workspace,
      e.namespace,
      e.flowId,
      e.snapshotId,
      JSON.stringify(e.definition),
      e.trigger,
      e.scheduledFor,
      e.parentTaskRunId,
      e.inputs === null ? null : JSON.stringify(e.inputs),
    ],
  );
  return r.rows[0] ? toExecutionRecord(r.rows[0]) : null;
}
