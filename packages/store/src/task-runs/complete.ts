import { StaleFenceError, type TaskRunReason } from '@sluice/protocol';
import { query, type Queryable } from '../handle';
import { assertTaskRunId, TaskRunNotFoundError } from '../errors';
import { ENDED_TASK_RUN_COLUMNS, qualifiedColumns, toEndedTaskRunRow, type EndedTaskRunRow } from '../rows';
import { currentTaskRun } from './fence';
import type { FencedRef } from './start';
import { isActiveByKey } from './state-conditions';

export interface CompleteTaskRun extends FencedRef {
  state: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  reason?: TaskRunReason | null;
  exitCode?: number | null;
  error?: string | null;
}

/** The outcome a completion wrote (applied) or found (a repeat): EndedTaskRunRow, not the whole row. */
export type CompleteResult = { applied: boolean; row: EndedTaskRunRow };

// Sent as a named (prepared) statement: completion runs once per task run, and
// preparing it once per connection skips the parse and plan of every later
// call (bench/README.md, peers: before/after). The text never changes, so
// the name stays valid for the connection's life. It returns the outcome
// only (EndedTaskRunRow): the whole row costs more to ship and parse.
const COMPLETE_SQL = `
UPDATE task_runs
SET state = $3, reason = $4, exit_code = $5, error = $6, ended_at = now()
WHERE id = $1 AND fence = $2 AND ${isActiveByKey()}
RETURNING ${ENDED_TASK_RUN_COLUMNS}`;

// Many completions in one statement and one round trip: unnest() turns the
// parallel arrays into rows, and each row carries the same fence and state
// conditions as COMPLETE_SQL, so a batch decides exactly as its single calls
// would. Prepared for the reason given at COMPLETE_SQL.
// The state condition is written for a keyed statement (state-conditions.ts):
// each row is found by its primary key, a nested loop over the unnest.
const COMPLETE_MANY_SQL = `
UPDATE task_runs t
SET state = c.state, reason = c.reason, exit_code = c.exit_code, error = c.error, ended_at = now()
FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::int[], $6::text[])
     AS c(id, fence, state, reason, exit_code, error)
WHERE t.id = c.id AND t.fence = c.fence AND ${isActiveByKey('t')}
RETURNING ${qualifiedColumns(ENDED_TASK_RUN_COLUMNS, 't')}`;

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
  const { rows } = await query(db, {
    name: 'sluice_complete_task_run',
    text: COMPLETE_SQL,
    values: completeValues(req),
  });
  if (rows[0]) return { applied: true, row: toEndedTaskRunRow(rows[0]) };
  return explainNotApplied(db, req);
}

// COMPLETE_SQL and its outbox event in one statement: the event row exists
// exactly when the completion was written (both or neither, as one statement
// is atomic), and the NOTIFY goes out at its commit. One round trip instead of
// BEGIN, UPDATE, INSERT, COMMIT: the runner API ends every task run this way.
// $7 = event kind, $8 = NOTIFY channel; the payload names the task run.
const COMPLETE_WITH_EVENT_SQL = `
WITH done AS (${COMPLETE_SQL}),
recorded AS (
  INSERT INTO events (kind, payload)
  SELECT $7::text, jsonb_build_object('taskRunId', done.id) FROM done
  RETURNING id
)
SELECT done.*, pg_notify($8::text, recorded.id::text) FROM done, recorded`;

/** Where completeTaskRunWithEvent records and announces the completion. */
export interface CompletionEvent {
  /** The events row's kind, e.g. `task_run.ended`. */
  kind: string;
  /** The channel NOTIFYed with the event's id. */
  channel: string;
}

/**
 * completeTaskRun that also records `event` in the events outbox (payload
 * `{ taskRunId }`) when, and only when, the completion is applied — in one
 * statement. A repeat or a stale fence records nothing.
 */
export async function completeTaskRunWithEvent(
  db: Queryable,
  req: CompleteTaskRun,
  event: CompletionEvent,
): Promise<CompleteResult> {
  assertTaskRunId(req.taskRunId);
  const { rows } = await query(db, {
    name: 'sluice_complete_task_run_with_event',
    text: COMPLETE_WITH_EVENT_SQL,
    values: [...completeValues(req), event.kind, event.channel],
  });
  if (rows[0]) return { applied: true, row: toEndedTaskRunRow(rows[0]) };
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
  const applied = new Map<string, EndedTaskRunRow>();
  if (valid.length > 0) {
    // A batch of one goes through the single statement: unnest() costs more
    // than it saves there (measured in bench/peers' before/after table).
    const [only] = valid;
    const { rows } = await query(
      db,
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
      const run = toEndedTaskRunRow(row);
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
  if (row.fence === req.fence && row.endedAt !== null) {
    const { id, fence, state, reason, exitCode, error, endedAt } = row;
    return { applied: false, row: { id, fence, state, reason, exitCode, error, endedAt } };
  }
  throw new StaleFenceError(req.taskRunId, req.fence);
}
