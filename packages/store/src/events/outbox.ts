import { query, type Queryable } from '../handle';

/** LISTEN/NOTIFY channel raised (on commit) whenever an event is written. */
export const EVENTS_CHANNEL = 'sluice_events';

export type EngineEvent =
  | { kind: 'task_run.ended'; payload: { taskRunId: string } }
  | { kind: 'execution.ended'; payload: { executionId: string } };

/** Writes an event in the caller's transaction; the NOTIFY is delivered when it commits. */
export async function emitEvent(db: Queryable, event: EngineEvent): Promise<void> {
  await query(
    db,
    `WITH ins AS (INSERT INTO events (kind, payload) VALUES ($1, $2) RETURNING id)
     SELECT pg_notify('${EVENTS_CHANNEL}', ins.id::text) FROM ins`,
    [event.kind, JSON.stringify(event.payload)],
  );
}
