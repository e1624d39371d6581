import { query, type Queryable } from '../handle';

/**
 * Idempotency records of executor claims (executor_claims): which task runs
 * a claim call with a given Idempotency-Key answered. claimTaskRunsRecorded
 * (task-runs/claim.ts) writes the record in the claim's own statement; these
 * serve the claim with a per-pool limit and the replay of a repeat.
 */

/** The task run ids recorded under (instance, key); null when the key is new. */
export async function getClaimRecord(
  db: Queryable,
  instanceId: string,
  key: string,
): Promise<string[] | null> {
  const { rows } = await query<{ task_run_ids: string[] | null }>(
    db,
    'SELECT task_run_ids FROM executor_claims WHERE instance_id = $1 AND idempotency_key = $2',
    [instanceId, key],
  );
  return rows[0] ? (rows[0].task_run_ids ?? []) : null;
}

/** Adds `taskRunIds` to the record of (instance, key), creating it; answers every id now recorded. */
export async function appendClaimRecord(
  db: Queryable,
  instanceId: string,
  key: string,
  taskRunIds: string[],
): Promise<string[]> {
  const { rows } = await query<{ task_run_ids: string[] }>(
    db,
    `INSERT INTO executor_claims (instance_id, idempotency_key, task_run_ids) VALUES ($1, $2, $3::uuid[])
     ON CONFLICT (instance_id, idempotency_key)
     DO UPDATE SET task_run_ids = executor_claims.task_run_ids || EXCLUDED.task_run_ids
     RETURNING task_run_ids`,
    [instanceId, key, taskRunIds],
  );
  return rows[0]?.task_run_ids ?? [];
}
