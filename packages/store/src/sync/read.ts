import { query, type Queryable } from '../handle';
import {
  streamColumns,
  streamOfColumns,
  type SyncCommitEntry,
  type SyncKey,
  type SyncStateEntry,
  type SyncStateType,
  type SyncStream,
} from './types';

const KEY = 'workspace = $1 AND namespace = $2 AND flow_id = $3 AND task_id = $4';
const KEY_S = 's.workspace = $1 AND s.namespace = $2 AND s.flow_id = $3 AND s.task_id = $4';
const keyValues = (key: SyncKey) => [key.workspace, key.namespace, key.flowId, key.taskId];

/** The committed state of a sync task: its stream rows (STREAM) or its one GLOBAL/LEGACY row; [] when none. */
export async function getSyncState(db: Queryable, key: SyncKey): Promise<SyncStateEntry[]> {
  const { rows } = await query<{
    stream_namespace: string;
    stream_name: string;
    state_type: SyncStateType;
    state: string;
    execution_id: string;
    task_run_id: string;
    updated_at: Date;
  }>(
    db,
    `SELECT stream_namespace, stream_name, state_type, state, execution_id, task_run_id, updated_at
     FROM sync_states WHERE ${KEY} ORDER BY stream_namespace, stream_name`,
    keyValues(key),
  );
  return rows.map((r) => ({
    stateType: r.state_type,
    stream: streamOfColumns(r.stream_namespace, r.stream_name),
    state: r.state,
    executionId: r.execution_id,
    taskRunId: r.task_run_id,
    updatedAt: r.updated_at,
  }));
}

export interface SyncLedgerPage {
  limit: number;
  /** The id of the last entry of the previous page: the next page holds older entries. */
  before?: string;
}

/** The commit ledger of a sync task, newest first, a page at a time (keyset on the ledger id). */
export async function listSyncCommits(
  db: Queryable,
  key: SyncKey,
  page: SyncLedgerPage,
): Promise<SyncCommitEntry[]> {
  const values: unknown[] = [...keyValues(key), page.limit];
  const before = page.before !== undefined && /^\d+$/.test(page.before) ? page.before : undefined;
  if (before !== undefined) values.push(before);
  const { rows } = await query<{
    id: string;
    execution_id: string;
    task_run_id: string;
    attempt: number;
    sequence: number;
    state_type: SyncStateType;
    stream_namespace: string;
    stream_name: string;
    records: string;
    bytes: string;
    streams: Record<string, { records: number; bytes: number }>;
    committed_at: Date;
  }>(
    db,
    `SELECT * FROM sync_commits WHERE ${KEY}${before !== undefined ? ' AND id < $6::bigint' : ''}
     ORDER BY id DESC LIMIT $5`,
    values,
  );
  return rows.map((r) => ({
    id: String(r.id),
    executionId: r.execution_id,
    taskRunId: r.task_run_id,
    attempt: r.attempt,
    sequence: r.sequence,
    stateType: r.state_type,
    stream: streamOfColumns(r.stream_namespace, r.stream_name),
    records: Number(r.records),
    bytes: Number(r.bytes),
    streams: r.streams,
    committedAt: r.committed_at,
  }));
}

/**
 * Resets the committed state of a sync task: the next read of the reset
 * streams starts from scratch. Without `streams`, the whole key. With
 * streams: their STREAM rows go; in a GLOBAL state their entries of
 * `global.stream_states` go (the shared state stays); a LEGACY state cannot
 * be split, so it goes whole. A sync running meanwhile may commit again
 * after the reset. Returns the number of rows deleted or changed.
 */
export async function resetSyncState(
  db: Queryable,
  key: SyncKey,
  streams?: readonly SyncStream[],
): Promise<number> {
  if (!streams) {
    const { rowCount } = await query(db, `DELETE FROM sync_states WHERE ${KEY}`, keyValues(key));
    return rowCount ?? 0;
  }
  const cols = streams.map((s) => streamColumns(s));
  const namespaces = cols.map(([ns]) => ns);
  const names = cols.map(([, name]) => name);
  const { rows } = await query<{ deleted: number; changed: number }>(
    db,
    `WITH reset(ns, name) AS (SELECT * FROM unnest($5::text[], $6::text[])),
     deleted AS (
       DELETE FROM sync_states s WHERE ${KEY_S}
         AND (s.state_type = 'LEGACY'
              OR (s.state_type = 'STREAM' AND (s.stream_namespace, s.stream_name) IN (SELECT ns, name FROM reset)))
       RETURNING 1
     ),
     changed AS (
       UPDATE sync_states s SET updated_at = now(), state = jsonb_set(
         s.state::jsonb, '{global,stream_states}',
         COALESCE((SELECT jsonb_agg(e) FROM jsonb_array_elements(s.state::jsonb -> 'global' -> 'stream_states') e
                   WHERE NOT EXISTS (SELECT 1 FROM reset r WHERE r.name = e -> 'stream_descriptor' ->> 'name'
                     AND r.ns = COALESCE(e -> 'stream_descriptor' ->> 'namespace', ''))), '[]'::jsonb))::text
       WHERE ${KEY_S} AND s.state_type = 'GLOBAL'
         AND jsonb_typeof(s.state::jsonb -> 'global' -> 'stream_states') = 'array'
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM deleted)::int AS deleted, (SELECT count(*) FROM changed)::int AS changed`,
    [...keyValues(key), namespaces, names],
  );
  return (rows[0]?.deleted ?? 0) + (rows[0]?.changed ?? 0);
}
