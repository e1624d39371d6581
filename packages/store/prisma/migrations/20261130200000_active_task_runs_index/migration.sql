-- Active task runs get their own partial index instead of the full
-- (state, heartbeat_at) index.
--
-- Why: the full index held an entry for every task run ever run, and its key
-- included heartbeat_at, so every heartbeat (each running task run, every few
-- seconds) and every completion inserted a new entry in it. The readers of
-- active runs (watchdog sweep, ending an owner's runs, the kubernetes cap per
-- pool, "is it still running?") only ever ask for STARTING/RUNNING rows,
-- which are bounded by the slots in use. Keyed on (executor_type, pool),
-- which no heartbeat changes, a heartbeat touches no indexed column and can
-- be a HOT update; a completion leaves the predicate and adds no entry here.
-- Queued rows are served by task_runs_claim_idx.
DROP INDEX "task_runs_state_heartbeat_at_idx";

CREATE INDEX "task_runs_active_idx" ON "task_runs"("executor_type", "pool") WHERE "state" IN ('STARTING', 'RUNNING');
