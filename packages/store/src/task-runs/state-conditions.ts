// Conditions on `state` for statements that find their rows by a key (id,
// execution_id). Each is written `(...) IS TRUE`: the same truth value, as
// state is NOT NULL, but no longer a condition the planner can match with the
// predicates of the partial indexes task_runs_active_idx and
// task_runs_claim_idx. Matched, it may serve `id = $1 AND state IN (...)` by
// scanning every active (or queued) run and filtering by id whenever its
// statistics say there are few — after a quiet night, say — and then every
// heartbeat and completion reads all running task runs
// (test/keyed-writes.test.ts: 300 rows per heartbeat before this).
// Statements that want every active run (watchdog, owner shutdown, the
// kubernetes cap, counts) keep the bare condition so they do use the index.

/** `state IN ('STARTING', 'RUNNING')` for a keyed statement; `alias` qualifies the column. */
export function isActiveByKey(alias?: string): string {
  return `(${alias ? `${alias}.` : ''}state IN ('STARTING', 'RUNNING')) IS TRUE`;
}

/** `state = 'QUEUED'` for a keyed statement. */
export function isQueuedByKey(): string {
  return `(state = 'QUEUED') IS TRUE`;
}
