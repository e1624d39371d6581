// Completions without an outbox event, kept for the benchmarks only: they
// measure the store's claim/complete cycle at the store level (peers, store-ab,
// claim-store, claim-depth, queue-layout). Production ends every task run with
// completeTaskRunWithEvent (@sluice/store), whose statement embeds this
// UPDATE; these copies are frozen here so a benchmark's numbers stay
// comparable with its earlier runs (docs/store.md, Benchmarks).
import type { Pool, PoolClient } from 'pg';
import {
  assertTaskRunId,
  ENDED_TASK_RUN_COLUMNS,
  getTaskRun,
  isActiveByKey,
  isUuid,
  qualifiedColumns,
  StaleFenceError,
  TaskRunNotFoundError,
  toEndedTaskRunRow,
  type CompleteResult,
  type CompleteTaskRun,
  type EndedTaskRunRow,
} from '@sluice/store';

type Db = Pool | PoolClient;

const COMPLETE_SQL = `
UPDATE task_runs
SET state = $3, reason = $4, exit_code = $5, error = $6, ended_at = now()
WHERE id = $1 AND fence = $2 AND ${isActiveByKey()}
RETURNING ${ENDED_TASK_RUN_COLUMNS}`;

// Many completions in one statement and one round trip: unnest() turns the
// parallel arrays into rows, each with the same fence and state conditions as
// COMPLETE_SQL.
const COMPLETE_MANY_SQL = `
UPDATE task_runs t
SET state = c.state, reason = c.reason, exit_code = c.exit_code, error = c.error, ended_at = now()
FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::int[], $6::text[])
     AS c(id, fence, state, reason, exit_code, error)
WHERE t.id = c.id AND t.fence = c.fence AND ${isActiveByKey('t')}
RETURNING ${qualifiedColumns(ENDED_TASK_RUN_COLUMNS, 't')}`;

function completeValues(req: CompleteTaskRun): unknown[] {
  return [req.taskRunId, req.fence, req.state, req.reason ?? null, req.exitCode ?? null, req.error ?? null];
}

/** Ends a held task run as completeTaskRunWithEvent decides, without writing its event. */
export async function completeTaskRun(db: Db, req: CompleteTaskRun): Promise<CompleteResult> {
  assertTaskRunId(req.taskRunId);
  const { rows } = await db.query({
    name: 'sluice_complete_task_run',
    text: COMPLETE_SQL,
    values: completeValues(req),
  });
  if (rows[0]) return { applied: true, row: toEndedTaskRunRow(rows[0]) };
  return explainNotApplied(db, req);
}

/**
 * completeTaskRun for many task runs in one round trip. The answers come back
 * in request order, settled: a refused request does not undo the others.
 */
export async function completeTaskRuns(
  db: Db,
  reqs: CompleteTaskRun[],
): Promise<PromiseSettledResult<CompleteResult>[]> {
  const valid = reqs.filter((r) => isUuid(r.taskRunId));
  const applied = new Map<string, EndedTaskRunRow>();
  if (valid.length > 0) {
    // A batch of one goes through the single statement: unnest() costs more than it saves there.
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

/** Why a completion wrote nothing: a repeat of the holder's own call, or a fence someone else moved. */
async function explainNotApplied(db: Db, req: CompleteTaskRun): Promise<CompleteResult> {
  assertTaskRunId(req.taskRunId);
  const row = await getTaskRun(db, req.taskRunId);
  if (!row) throw new TaskRunNotFoundError(req.taskRunId);
  if (row.fence === req.fence && row.endedAt !== null) {
    const { id, fence, state, reason, exitCode, error, endedAt } = row;
    return { applied: false, row: { id, fence, state, reason, exitCode, error, endedAt } };
  }
  throw new StaleFenceError(req.taskRunId, req.fence);
}
