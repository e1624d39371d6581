import { StaleFenceError, type TaskRunReason } from '@sluice/protocol';
import { query, type Queryable } from '../handle';
import { assertTaskRunId, TaskRunNotFoundError } from '../errors';
import { ENDED_TASK_RUN_COLUMNS, toEndedTaskRunRow, type EndedTaskRunRow } from '../rows';
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
 * The holder ends its task run (docs/decisions.md §8):
 * - fence current and the run active → the terminal state is written;
 * - fence current but the run already ended → applied: false, nothing
 *   changes: the holder repeated its own call (its first answer got lost);
 * - any other fence → StaleFenceError: someone else ended it (watchdog,
 *   shutdown, cancel), and those always bump the fence.
 * With the completion it records `event` in the events outbox (payload
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

function completeValues(req: CompleteTaskRun): unknown[] {
  return [req.taskRunId, req.fence, req.state, req.reason ?? null, req.exitCode ?? null, req.error ?? null];
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
