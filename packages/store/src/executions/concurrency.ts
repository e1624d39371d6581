import { query, type Queryable, type TransactionScope } from '../handle';
import { toExecutionRecord, type ExecutionDbRow, type ExecutionRecord } from './rows';

export async function countRunningExecutionsOfFlow(
  db: Queryable,
  namespace: string,
  flowId: string,
): Promise<number> {
  const r = await query<{ n: string }>(
    db,
    `SELECT count(*) AS n FROM executions WHERE namespace = $1 AND flow_id = $2 AND state = 'RUNNING'`,
    [namespace, flowId],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** Oldest executions of a flow still waiting for a concurrency slot, locked so two starters skip each other. */
export async function lockQueuedExecutionsOfFlow(
  tx: TransactionScope,
  namespace: string,
  flowId: string,
  limit: number,
): Promise<ExecutionRecord[]> {
  const r = await query<ExecutionDbRow>(
    tx,
    `SELECT * FROM executions WHERE namespace = $1 AND flow_id = $2 AND state = 'QUEUED'
     ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED`,
    [namespace, flowId, limit],
  );
  return r.rows.map(toExecutionRecord);
}

/** Serialises concurrency decisions for one flow (a transaction-scoped advisory lock). */
export async function lockFlowForConcurrency(
  tx: TransactionScope,
  namespace: string,
  flowId: string,
): Promise<void> {
  await query(tx, 'SELECT pg_advisory_xact_lock(hashtext($1))', [
    `sluice:flow-concurrency:${namespace}/${flowId}`,
  ]);
}
