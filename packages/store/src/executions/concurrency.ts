import { query, type Queryable, type TransactionScope } from '../handle';
import { toExecutionRecord, type ExecutionDbRow, type ExecutionRecord } from './rows';
import type { NamespaceKey } from '../workspaces';

export async function countRunningExecutionsOfFlow(
  db: Queryable,
  ns: NamespaceKey,
  flowId: string,
): Promise<number> {
  const r = await query<{ n: string }>(
    db,
    `SELECT count(*) AS n FROM executions
     WHERE workspace = $1 AND namespace = $2 AND flow_id = $3 AND state = 'RUNNING'`,
    [ns.workspace, ns.namespace, flowId],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** Oldest executions of a flow still waiting for a concurrency slot, locked so two starters skip each other. */
export async function lockQueuedExecutionsOfFlow(
  tx: TransactionScope,
  ns: NamespaceKey,
  flowId: string,
  limit: number,
): Promise<ExecutionRecord[]> {
  const r = await query<ExecutionDbRow>(
    tx,
    `SELECT * FROM executions WHERE workspace = $1 AND namespace = $2 AND flow_id = $3 AND state = 'QUEUED'
     ORDER BY created_at, id LIMIT $4 FOR UPDATE SKIP LOCKED`,
    [ns.workspace, ns.namespace, flowId, limit],
  );
  return r.rows.map(toExecutionRecord);
}

/** Serialises concurrency decisions for one flow (a transaction-scoped advisory lock). */
export async function lockFlowForConcurrency(
  tx: TransactionScope,
  ns: NamespaceKey,
  flowId: string,
): Promise<void> {
  // Names hold no '/', so the key is unambiguous.
  await query(tx, 'SELECT pg_advisory_xact_lock(hashtext($1))', [
    `sluice:flow-concurrency:${ns.workspace}/${ns.namespace}/${flowId}`,
  ]);
}
