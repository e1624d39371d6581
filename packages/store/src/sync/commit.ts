import { query, type Queryable } from '../handle';
import { assertTaskRunId } from '../errors';
import { refuseWrite } from '../task-runs/fence';
import { isActiveByKey } from '../task-runs/state-conditions';
import type { FencedRef } from '../task-runs/start';
import { streamColumns, type SyncCounts, type SyncStateType, type SyncStream } from './types';

export interface CommitSyncState extends FencedRef {
  /** The source's state number in this attempt; a resent commit of the same number changes nothing. */
  sequence: number;
  stateType: SyncStateType;
  /** The stream of a STREAM state; null for GLOBAL and LEGACY. */
  stream: SyncStream | null;
  /** The source's state object as JSON text (stored as is). */
  state: string;
  /** Records and bytes this commit made durable, per stream key. */
  streams: Record<string, SyncCounts>;
}

/**
 * Commits one state of a sync task and its ledger row in ONE statement
 * (data-modifying CTEs are atomic), fenced like every write of a task run's
 * holder: only while the task run is STARTING/RUNNING at `fence`, locked FOR
 * SHARE so a concurrent fence bump waits for it or wins before it. The key is
 * the task run's own (its execution's flow and its task id), so a runner can
 * commit only to its own sync. A STREAM state replaces its stream's row (and
 * drops a GLOBAL/LEGACY row: the source changed state type); a GLOBAL or
 * LEGACY state replaces the whole key. Returns false when this sequence was
 * already committed by this task run (a resent call whose answer was lost).
 * A stale fence throws StaleFenceError and changes nothing.
 */
export async function commitSyncState(db: Queryable, req: CommitSyncState): Promise<boolean> {
  assertTaskRunId(req.taskRunId);
  const [streamNamespace, streamName] = streamColumns(req.stateType === 'STREAM' ? req.stream : null);
  if (req.stateType === 'STREAM' && streamName === '')
    throw new Error('commitSyncState: a STREAM state needs its stream');
  let records = 0;
  let bytes = 0;
  for (const c of Object.values(req.streams)) {
    records += c.records;
    bytes += c.bytes;
  }
  const { rows } = await query<{ fenced: number; written: number }>(
    db,
    `WITH fenced AS (
       SELECT tr.id, tr.execution_id, tr.task_id, tr.attempt, e.workspace, e.namespace, e.flow_id
       FROM task_runs tr JOIN executions e ON e.id = tr.execution_id
       WHERE tr.id = $1 AND tr.fence = $2 AND ${isActiveByKey('tr')}
       FOR SHARE OF tr
     ),
     ledger AS (
       INSERT INTO sync_commits (workspace, namespace, flow_id, task_id, execution_id, task_run_id, attempt,
                                 sequence, state_type, stream_namespace, stream_name, records, bytes, streams)
       SELECT f.workspace, f.namespace, f.flow_id, f.task_id, f.execution_id, f.id, f.attempt,
              $3, $4::text, $5, $6, $7, $8, $9::jsonb
       FROM fenced f
       ON CONFLICT (task_run_id, sequence) DO NOTHING
       RETURNING workspace, namespace, flow_id, task_id, execution_id, task_run_id
     ),
     cleared AS (
       DELETE FROM sync_states s USING ledger l
       WHERE s.workspace = l.workspace AND s.namespace = l.namespace AND s.flow_id = l.flow_id
         AND s.task_id = l.task_id
         AND CASE WHEN $4::text = 'STREAM' THEN s.stream_name = '' ELSE s.stream_name <> '' END
       RETURNING 1
     ),
     saved AS (
       INSERT INTO sync_states (workspace, namespace, flow_id, task_id, stream_namespace, stream_name,
                                state_type, state, execution_id, task_run_id)
       SELECT l.workspace, l.namespace, l.flow_id, l.task_id, $5, $6, $4::text, $10, l.execution_id, l.task_run_id
       FROM ledger l
       ON CONFLICT (workspace, namespace, flow_id, task_id, stream_namespace, stream_name) DO UPDATE
       SET state_type = EXCLUDED.state_type, state = EXCLUDED.state, execution_id = EXCLUDED.execution_id,
           task_run_id = EXCLUDED.task_run_id, updated_at = now()
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM fenced)::int AS fenced, (SELECT count(*) FROM ledger)::int AS written`,
    [
      req.taskRunId,
      req.fence,
      req.sequence,
      req.stateType,
      streamNamespace,
      streamName,
      records,
      bytes,
      JSON.stringify(req.streams),
      req.state,
    ],
  );
  if (!rows[0]?.fenced) await refuseWrite(db, req.taskRunId, req.fence);
  return (rows[0]?.written ?? 0) > 0;
}
