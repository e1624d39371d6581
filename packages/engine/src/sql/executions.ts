import type { Queryable } from '@sluice/store';
import type { ExecutionState } from '@sluice/protocol';
import type { ExecutionDefinition } from '../definition';

export interface ExecutionRecord {
  id: string;
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

interface ExecutionDbRow {
  id: string;
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

function toRecord(r: ExecutionDbRow): ExecutionRecord {
  return {
    id: r.id,
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

export async function insertExecution(
  db: Queryable,
  e: {
    id: string;
    namespace: string;
    flowId: string;
    snapshotId: string;
    definition: ExecutionDefinition;
    trigger: string;
    scheduledFor: Date | null;
    parentTaskRunId: string | null;
    inputs: Record<string, unknown> | null;
  },
): Promise<ExecutionRecord | null> {
  // A scheduled execution is unique per due time: a second scheduler cycle for
  // the same time inserts nothing and answers null.
  const r = await db.query<ExecutionDbRow>(
    `INSERT INTO executions (id, namespace, flow_id, snapshot_id, definition, state, trigger, scheduled_for,
                             parent_task_run_id, inputs)
     VALUES ($1, $2, $3, $4, $5, 'QUEUED', $6, $7, $8, $9)
     ON CONFLICT (namespace, flow_id, scheduled_for) DO NOTHING
     RETURNING *`,
    [
      e.id,
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
  return r.rows[0] ? toRecord(r.rows[0]) : null;
}

export async function getExecution(db: Queryable, id: string): Promise<ExecutionRecord | null> {
  const r = await db.query<ExecutionDbRow>('SELECT * FROM executions WHERE id = $1', [id]);
  return r.rows[0] ? toRecord(r.rows[0]) : null;
}

/** Serialises every state change of one execution: dependents are queued exactly once. */
export async function lockExecution(db: Queryable, id: string): Promise<ExecutionRecord | null> {
  const r = await db.query<ExecutionDbRow>('SELECT * FROM executions WHERE id = $1 FOR UPDATE', [id]);
  return r.rows[0] ? toRecord(r.rows[0]) : null;
}

export async function setExecutionState(
  db: Queryable,
  id: string,
  state: ExecutionState,
  reason: string | null = null,
): Promise<void> {
  const terminal = state === 'SUCCEEDED' || state === 'FAILED' || state === 'CANCELLED';
  await db.query(
    `UPDATE executions SET state = $2, reason = COALESCE($3, reason),
       started_at = CASE WHEN $2 = 'RUNNING' AND started_at IS NULL THEN now() ELSE started_at END,
       ended_at = CASE WHEN $4 THEN now() ELSE ended_at END
     WHERE id = $1`,
    [id, state, reason, terminal],
  );
}

export async function markExecutionCancelRequested(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE executions SET cancel_requested = true WHERE id = $1', [id]);
}

export async function countRunningExecutionsOfFlow(
  db: Queryable,
  namespace: string,
  flowId: string,
): Promise<number> {
  const r = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM executions WHERE namespace = $1 AND flow_id = $2 AND state = 'RUNNING'`,
    [namespace, flowId],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** Oldest executions of a flow still waiting for a concurrency slot, locked so two starters skip each other. */
export async function lockQueuedExecutionsOfFlow(
  db: Queryable,
  namespace: string,
  flowId: string,
  limit: number,
): Promise<ExecutionRecord[]> {
  const r = await db.query<ExecutionDbRow>(
    `SELECT * FROM executions WHERE namespace = $1 AND flow_id = $2 AND state = 'QUEUED'
     ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED`,
    [namespace, flowId, limit],
  );
  return r.rows.map(toRecord);
}

/** Serialises concurrency decisions for one flow (a transaction-scoped advisory lock). */
export async function lockFlowForConcurrency(
  db: Queryable,
  namespace: string,
  flowId: string,
): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
    `sluice:flow-concurrency:${namespace}/${flowId}`,
  ]);
}
