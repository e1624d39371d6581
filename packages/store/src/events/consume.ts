import { query, type Queryable, type TransactionScope } from '../handle';

export interface PendingEvent {
  id: string;
  kind: string;
  payload: Record<string, unknown>;
  attempts: number;
}

/** The oldest pending event no other consumer holds, locked until the caller's transaction ends. */
export async function lockNextEvent(tx: TransactionScope, maxAttempts: number): Promise<PendingEvent | null> {
  const r = await query<PendingEvent>(
    tx,
    `SELECT id::text AS id, kind, payload, attempts FROM events
     WHERE processed_at IS NULL AND attempts < $1
     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
    [maxAttempts],
  );
  return r.rows[0] ?? null;
}

export async function markEventProcessed(tx: TransactionScope, id: string): Promise<void> {
  await query(tx, 'UPDATE events SET processed_at = now(), attempts = attempts + 1 WHERE id = $1', [id]);
}

export async function recordEventFailure(db: Queryable, id: string, error: string): Promise<void> {
  await query(db, 'UPDATE events SET attempts = attempts + 1, last_error = $2 WHERE id = $1', [
    id,
    error.slice(0, 2000),
  ]);
}
