import { StaleFenceError, type TaskRunReason } from '@sluice/protocol';
import type { Queryable } from '../db';
import { assertTaskRunId, TaskRunNotFoundError } from '../errors';
import { toTaskRunRow, type TaskRunRow } from '../rows';
import { currentTaskRun } from './fence';
import type { FencedRef } from './start';

export interface CompleteTaskRun extends FencedRef {
  state: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  reason?: TaskRunReason | null;
  exitCode?: number | null;
  error?: string | null;
}

export type CompleteResult = { applied: true; row: TaskRunRow } | { applied: false; row: TaskRunRow };

// Sent as a named (prepared) statement: completion runs once per task run, and
// preparing it once per connection skips the parse and plan of every later
// call (bench/README.md, peers: before/after). The text never changes, so
// the name stays valid for the connection's life.
const COMPLETE_SQL = `
UPDATE task_runs
SET state = $3, reason = $4, exit_code = $5, error = $6, ended_at = now()
WHERE id = $1 AND fence = $2 AND state IN ('STARTING', 'RUNNING')
RETURNING *`;

// Many completions in one statement and one round trip: unnest() turns the
// parallel arrays into rows, and each row carries the same fence and state
// conditions as COMPLETE_SQL, so a batch decides exactly as its single calls
// would. Prepared for the reason given at COMPLETE_SQL.
// `(state IN (...)) IS TRUE` means the same as the bare IN (state is NOT NULL)
// but is no index condition, so each row is found by its primary key (nested
// loop over the unnest). With the bare IN the planner hash-joins a scan of
// task_runs_state_heartbeat_at_idx over every active run whenever its
// statistics say few are active (measured: a batch of 16 read 320 rows).
const COMPLETE_MANY_SQL = `
UPDATE task_runs t
SET state = c.state, reason = c.reason, exit_code = c.exit_code, error = c.error, ended_at = now()
FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::int[], $6::text[])
     AS c(id, fence, state, reason, exit_code, error)
WHERE t.id = c.id AND t.fence = c.fence AND (t.state IN ('STARTING', 'RUNNING')) IS TRUE
RETURNING t.*`;

/**
 * The holder ends its task run (DESIGN.md point 8):
 * - fence current and the run active → the terminal state is written;
 * - fence current but the run already ended → applied: false, nothing
 *   changes: the holder repeated its own call (its first answer got lost);
 * - any other fence → StaleFenceError: someone else ended it (watchdog,
 *   shutdown, cancel), and those always bump the fence.
 */
export async function completeTaskRun(db: Queryable, req: CompleteTaskRun): Promise<CompleteResult> {
  assertTaskRunId(req.taskRunId);
  const { rows } = await db.query({
    name: 'sluice_complete_task_run',
    text: COMPLETE_SQL,
    values: [
      req.taskRunId,
      req.fence,
      req.state,
      req.reason ?? null,
      req.exitCode ?? null,
      req.error ?? null,
    ],
  });
  if (rows[0]) return { applied: true, row: toTaskRunRow(rows[0]) };
  return explainNotApplied(db, req);
}

/**
 * completeTaskRun for many task runs in one round trip (a holder that ends
 * several at once). Each request is decided as completeTaskRun decides it;
 * the answers come back in request order, settled: a refused request
 * (StaleFenceError, TaskRunNotFoundError) does not undo the others, which
 * are already written.
 */
export async function completeTaskRuns(
  db: Queryable,
  reqs: CompleteTaskRun[],
): Promise<PromiseSettledResult<CompleteResult>[]> {
  const valid = reqs.filter((r) => isUuidish(r.taskRunId));
  const applied = new Map<string, TaskRunRow>();
  if (valid.length > 0) {
    // A batch of one goes through the single statement: unnest() costs more
    // than it saves there (measured in bench/peers' before/after table).
    const [only] = valid;
    const { rows } = await db.query(
      valid.length === 1 && only
        ? { name: 'sluice_complete_task_run', text: COMPLETE_SQL, values: completeValues(only) }
        : {
            name: 'sluice_complete_task_runs',
            text: COMPLETE_MANY_SQL,
            values: [
              valid.map((r) => r.taskRunId),
              valid.map((r) => r.fence),
              valid.map((r) => r.state),
              valid.map((r) => r.reason ?? null),
              valid.map((r) => r.exitCode ?? null),
              valid.map((r) => r.error ?? null),
            ],
          },
    );
    for (const row of rows) {
      const run = toTaskRunRow(row);
      applied.set(`${run.id}/${run.fence}`, run);
    }
  }
  return Promise.all(
    reqs.map(async (req): Promise<PromiseSettledResult<CompleteResult>> => {
      // Completion keeps the fence, so the written row answers the request that carried it;
      // one id twice with that fence: the first entry wrote it, the second is a repeat.
      const key = `${req.taskRunId.toLowerCase()}/${req.fence}`;
      const row = applied.get(key);
      if (row) applied.delete(key);
      try {
        return {
          status: 'fulfilled',
          value: row ? { applied: true, row } : await explainNotApplied(db, req),
        };
      } catch (reason) {
        return { status: 'rejected', reason };
      }
    }),
  );
}

function completeValues(req: CompleteTaskRun): unknown[] {
  return [req.taskRunId, req.fence, req.state, req.reason ?? null, req.exitCode ?? null, req.error ?? null];
}

function isUuidish(taskRunId: string): boolean {
  try {
    assertTaskRunId(taskRunId);
    return true;
  } catch {
    return false;
  }
}

/** Why a completion wrote nothing: a repeat of the holder's own call, or a fence someone else moved. */
async function explainNotApplied(db: Queryable, req: CompleteTaskRun): Promise<CompleteResult> {
  assertTaskRunId(req.taskRunId);
  const row = await currentTaskRun(db, req.taskRunId);
  if (!row) throw new TaskRunNotFoundError(req.taskRunId);
  if (row.fence === req.fence && row.endedAt !== null) return { applied: false, row };
  throw new StaleFenceError(req.taskRunId, req.fence);
}
