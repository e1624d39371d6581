import type { PoolClient } from 'pg';
import type { Queryable } from '@sluice/store';

/** LISTEN/NOTIFY channel raised (on commit) whenever an event is written. */
export const EVENTS_CHANNEL = 'sluice_events';

export type EngineEvent =
  | { kind: 'task_run.ended'; payload: { taskRunId: string } }
  | { kind: 'execution.ended'; payload: { executionId: string } };

/** Writes an event in the caller's transaction; the NOTIFY is delivered when it commits. */
export async function emitEvent(db: Queryable, event: EngineEvent): Promise<void> {
  await db.query(
    `WITH ins AS (INSERT INTO events (kind, payload) VALUES ($1, $2) RETURNING id)
     SELECT pg_notify('${EVENTS_CHANNEL}', ins.id::text) FROM ins`,
    [event.kind, JSON.stringify(event.payload)],
  );
}

export interface PendingEvent {
  id: string;
  kind: string;
  payload: Record<string, unknown>;
  attempts: number;
}

/** The oldest pending event no other consumer holds, locked until the caller's transaction ends. */
export async function lockNextEvent(tx: PoolClient, maxAttempts: number): Promise<PendingEvent | null> {
  const r = await tx.query<PendingEvent>(
    `SELECT id::text AS id, kind, payload, attempts FROM events
     WHERE processed_at IS NULL AND attempts < $1
     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`,
    [maxAttempts],
  );
  return r.rows[0] ?? null;
}

export async function markEventProcessed(tx: PoolClient, id: string): Promise<void> {
  await tx.query('UPDATE events SET processed_at = now(), attempts = attempts + 1 WHERE id = $1', [id]);
}

export async function recordEventFailure(db: Queryable, id: string, error: string): Promise<void> {
  await db.query('UPDATE events SET attempts = attempts + 1, last_error = $2 WHERE id = $1', [
    id,
    error.slice(0, 2000),
  ]);
}
