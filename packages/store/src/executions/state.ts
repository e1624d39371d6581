import type { ExecutionState } from '@sluice/protocol';
import { query, type Queryable } from '../handle';

export async function setExecutionState(
  db: Queryable,
  id: string,
  state: ExecutionState,
  reason: string | null = null,
): Promise<void> {
  const terminal = state === 'SUCCEEDED' || state === 'FAILED' || state === 'CANCELLED';
  await query(
    db,
    `UPDATE executions SET state = $2, reason = COALESCE($3, reason),
       started_at = CASE WHEN $2 = 'RUNNING' AND started_at IS NULL THEN now() ELSE started_at END,
       ended_at = CASE WHEN $4 THEN now() ELSE ended_at END
     WHERE id = $1`,
    [id, state, reason, terminal],
  );
}

export async function markExecutionCancelRequested(db: Queryable, id: string): Promise<void> {
  await query(db, 'UPDATE executions SET cancel_requested = true WHERE id = $1', [id]);
}
