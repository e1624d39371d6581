import { query, type Queryable } from '../handle';
import { toTaskRunRow, type TaskRunRow } from '../rows';

export interface WatchdogSweepOptions {
  /** PIPELINE_HEARTBEAT_TIMEOUT: an active run whose last heartbeat is older is `lost`. */
  heartbeatTimeoutMs: number;
  /** Slack past a RUNNING run's own timeout before the watchdog fails it with `timeout`: the runner enforces the timeout itself and should report first. */
  timeoutGraceMs?: number;
  /** Most task runs failed per sweep; the next sweep takes the rest. */
  limit?: number;
}

// One statement, safe to run from several `sluice jobs` replicas at once:
// FOR UPDATE SKIP LOCKED means a row is failed by whichever sweep locks it
// first; a sweep that meets it after that commit re-checks the WHERE against
// the new version (state FAILED) and drops it, so nothing is failed twice.
// Failing bumps the fence, so the old holder's later heartbeat, logs and
// completion are refused. A subflow task run parked on its child execution
// is left alone (its child's end resumes it). The scan touches only STARTING/RUNNING rows
// (task_runs_active_idx), which are bounded by the slots in use.
const SWEEP_SQL = `
WITH due AS (
  SELECT id,
         CASE WHEN coalesce(heartbeat_at, claimed_at) < now() - $1::float8 * interval '1 millisecond'
              THEN 'lost' ELSE 'timeout' END AS reason
  FROM task_runs
  WHERE state IN ('STARTING', 'RUNNING')
    -- A parked subflow has no process to heartbeat it: its child execution ends it.
    AND waiting_on_execution_id IS NULL
    AND (coalesce(heartbeat_at, claimed_at) < now() - $1::float8 * interval '1 millisecond'
         OR (state = 'RUNNING' AND started_at + (timeout_ms::bigint + $2::bigint) * interval '1 millisecond' < now()))
  ORDER BY coalesce(heartbeat_at, claimed_at)
  LIMIT $3::int
  FOR UPDATE SKIP LOCKED
)
UPDATE task_runs t
SET state = 'FAILED', reason = due.reason, fence = t.fence + 1, ended_at = now(),
    error = CASE WHEN due.reason = 'lost'
                 THEN 'no heartbeat for ' || round($1::float8 / 1000) || ' s from owner ' || coalesce(t.owner_id, '?')
                 ELSE 'exceeded its timeout of ' || t.timeout_ms || ' ms' END
FROM due
WHERE t.id = due.id
RETURNING t.*`;

/** Fails active task runs nobody heartbeats (`lost`) or that overran their timeout (`timeout`). */
export async function watchdogSweep(db: Queryable, opts: WatchdogSweepOptions): Promise<TaskRunRow[]> {
  if (!(opts.heartbeatTimeoutMs > 0)) {
    throw new Error(`watchdogSweep: heartbeatTimeoutMs must be positive, got ${opts.heartbeatTimeoutMs}`);
  }
  const { rows } = await query(db, SWEEP_SQL, [
    opts.heartbeatTimeoutMs,
    opts.timeoutGraceMs ?? 10_000,
    opts.limit ?? 500,
  ]);
  return rows.map(toTaskRunRow);
}
