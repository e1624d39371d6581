// Before/after of the claim-store changes made for this benchmark, in one run
// on one connection, each stage adding one change to the previous:
// - before:   the claim and the completion as unnamed statements (parsed and
//             planned on every call), whole rows returned, one completion per
//             run, the old (state, heartbeat_at) index — the store as it was;
// - prepared: the same statements, named (prepared once per connection);
// - batched:  one completion statement per claimed batch (unnest);
// - narrow:   claim and completion return only what their callers use;
// - index:    the index of active runs replaces (state, heartbeat_at);
// - after:    the claim is prepared per limit (the limit in its text), so
//             PostgreSQL plans it once instead of on every call — the store
//             as it is (claimTaskRuns + completeTaskRuns).
// The stages alternate within each round, so the machine's load hits them alike.
import type { Pool } from 'pg';
import {
  claimTaskRuns,
  claimTaskRunsSql,
  createPool,
  toClaimedTaskRunRow,
  type ClaimedTaskRunRow,
} from '@sluice/store';
import { completeTaskRuns } from '../lib/completions';
import { queueTaskRuns } from '../lib/queue';
import { median, now } from './stats';

// The store's statements as they were before these changes (same logic).
const OLD_CLAIM_SQL = `
WITH candidates AS (
  SELECT id FROM task_runs
  WHERE state = 'QUEUED'
    AND available_at <= now()
    AND executor_type = ANY($2::text[])
    AND (executor_type = 'inline' OR pool = ANY($3::text[]))
  ORDER BY available_at, created_at, id
  LIMIT $4
  FOR UPDATE SKIP LOCKED
)
UPDATE task_runs t
SET state = 'STARTING', fence = t.fence + 1, owner_id = $1, claimed_at = now(), heartbeat_at = now(), reason = NULL
FROM candidates c
WHERE t.id = c.id
RETURNING t.*`;

const OLD_COMPLETE_SQL = `
UPDATE task_runs
SET state = $3, reason = $4, exit_code = $5, error = $6, ended_at = now()
WHERE id = $1 AND fence = $2 AND state IN ('STARTING', 'RUNNING')
RETURNING *`;

const OLD_COMPLETE_MANY_SQL = `
UPDATE task_runs t
SET state = c.state, reason = c.reason, exit_code = c.exit_code, error = c.error, ended_at = now()
FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::int[], $6::text[])
     AS c(id, fence, state, reason, exit_code, error)
WHERE t.id = c.id AND t.fence = c.fence AND (t.state IN ('STARTING', 'RUNNING')) IS TRUE
RETURNING t.*`;

// Today's claim with the limit as a parameter, as it was before the claim was
// prepared per limit: its generic plan is poor, so PostgreSQL plans every call.
const LIMIT_PARAMETER_CLAIM_SQL = claimTaskRunsSql(1).replace(/LIMIT 1\n/, 'LIMIT $4\n');

const STAGES = ['before', 'prepared', 'batched', 'narrow', 'index', 'after'] as const;
type Stage = (typeof STAGES)[number];

export interface StoreAbResult {
  limit: number;
  jobs: number;
  /** Median jobs/s (claim + complete, one connection) per stage. */
  jobsPerSecond: Record<Stage, number>;
  /** after ÷ before */
  speedup: number;
}

type Row = { id: string; fence: number };

async function oldClaim(pool: Pool, limit: number, named: boolean): Promise<Row[]> {
  const values = ['bench', ['process'], ['default'], limit];
  const { rows } = await pool.query<Row>(
    named ? { name: 'bench_old_claim', text: OLD_CLAIM_SQL, values } : { text: OLD_CLAIM_SQL, values },
  );
  return rows;
}

/** Claims with the old statement and completes each run on its own (named or not). */
async function oneByOne(pool: Pool, limit: number, named: boolean): Promise<number> {
  let n = 0;
  for (;;) {
    const runs = await oldClaim(pool, limit, named);
    if (runs.length === 0) return n;
    for (const r of runs) {
      const values = [r.id, r.fence, 'SUCCEEDED', null, 0, null];
      await pool.query(
        named
          ? { name: 'bench_old_complete', text: OLD_COMPLETE_SQL, values }
          : { text: OLD_COMPLETE_SQL, values },
      );
      n++;
    }
  }
}

async function batched(pool: Pool, limit: number): Promise<number> {
  let n = 0;
  for (;;) {
    const runs = await oldClaim(pool, limit, true);
    if (runs.length === 0) return n;
    const { rowCount } = await pool.query({
      name: 'bench_old_complete_many',
      text: OLD_COMPLETE_MANY_SQL,
      values: [
        runs.map((r) => r.id),
        runs.map((r) => r.fence),
        runs.map(() => 'SUCCEEDED'),
        runs.map(() => null),
        runs.map(() => 0),
        runs.map(() => null),
      ],
    });
    n += rowCount ?? 0;
  }
}

/** Claims one batch of at most `limit`; the drain below works the queue with it. */
type ClaimBatch = (pool: Pool, limit: number) => Promise<ClaimedTaskRunRow[]>;

/** `claim` then one completeTaskRuns per claimed batch, until the queue is empty. */
async function drainClaimingWith(pool: Pool, limit: number, claim: ClaimBatch): Promise<number> {
  let n = 0;
  for (;;) {
    const runs = await claim(pool, limit);
    if (runs.length === 0) return n;
    const results = await completeTaskRuns(
      pool,
      runs.map((r) => ({ taskRunId: r.id, fence: r.fence, state: 'SUCCEEDED' as const, exitCode: 0 })),
    );
    n += results.filter((r) => r.status === 'fulfilled').length;
  }
}

const claimWithStore: ClaimBatch = (pool, limit) =>
  claimTaskRuns(pool, { ownerId: 'bench', executorTypes: ['process'], pools: ['default'], limit });

const claimWithLimitParameter: ClaimBatch = async (pool, limit) => {
  const { rows } = await pool.query({
    name: 'bench_limit_parameter_claim',
    text: LIMIT_PARAMETER_CLAIM_SQL,
    values: ['bench', ['process'], ['default'], limit],
  });
  return rows.map(toClaimedTaskRunRow);
};

/** The store as it is: claimTaskRuns + one completeTaskRuns per claimed batch, until the queue is empty. */
export function drainWithStore(pool: Pool, limit: number): Promise<number> {
  return drainClaimingWith(pool, limit, claimWithStore);
}

/** As drainWithStore, but claiming with LIMIT_PARAMETER_CLAIM_SQL. */
function limitParameter(pool: Pool, limit: number): Promise<number> {
  return drainClaimingWith(pool, limit, claimWithLimitParameter);
}

const RUN: Record<Stage, (pool: Pool, limit: number) => Promise<number>> = {
  before: (pool, limit) => oneByOne(pool, limit, false),
  prepared: (pool, limit) => oneByOne(pool, limit, true),
  batched,
  narrow: limitParameter,
  index: limitParameter,
  after: drainWithStore,
};

/** Puts the task_runs indexes of active runs as they were (old) or are (new); untimed. */
async function useActiveIndex(pool: Pool, which: 'old' | 'new'): Promise<void> {
  if (which === 'old') {
    await pool.query('DROP INDEX IF EXISTS task_runs_active_idx');
    await pool.query(
      'CREATE INDEX IF NOT EXISTS task_runs_state_heartbeat_at_idx ON task_runs (state, heartbeat_at)',
    );
  } else {
    await pool.query('DROP INDEX IF EXISTS task_runs_state_heartbeat_at_idx');
    await pool.query(
      `CREATE INDEX IF NOT EXISTS task_runs_active_idx ON task_runs (executor_type, pool)
       WHERE state IN ('STARTING', 'RUNNING')`,
    );
  }
  await pool.query('ANALYZE task_runs');
}

/** Alternates the stages `rounds` times per claim limit; medians of jobs/s (claim + complete, one connection). */
export async function storeAb(
  url: string,
  jobs: number,
  limits: number[],
  rounds: number,
): Promise<StoreAbResult[]> {
  const results: StoreAbResult[] = [];
  try {
    for (const limit of limits) {
      const rates = Object.fromEntries(STAGES.map((s) => [s, [] as number[]])) as Record<Stage, number[]>;
      for (let r = 0; r < rounds; r++) {
        for (const stage of STAGES) {
          await queueTaskRuns(url, jobs);
          const pool = createPool(url, { max: 1 });
          try {
            await useActiveIndex(pool, stage === 'index' || stage === 'after' ? 'new' : 'old');
            const t0 = now();
            const done = await RUN[stage](pool, limit);
            if (done !== jobs)
              throw new Error(`store A/B ${stage}: expected ${jobs} completions, got ${done}`);
            rates[stage].push(jobs / ((now() - t0) / 1000));
          } finally {
            await pool.end();
          }
        }
      }
      const jobsPerSecond = Object.fromEntries(
        STAGES.map((s) => [s, Math.round(median(rates[s]))]),
      ) as Record<Stage, number>;
      results.push({
        limit,
        jobs,
        jobsPerSecond,
        speedup: Number((jobsPerSecond.after / jobsPerSecond.before).toFixed(2)),
      });
    }
  } finally {
    // Leave the schema as migrated.
    const pool = createPool(url, { max: 1 });
    await useActiveIndex(pool, 'new').finally(() => pool.end());
  }
  return results;
}
