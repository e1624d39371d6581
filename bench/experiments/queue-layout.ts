// Experiment, not part of `pnpm bench`: would a different task_runs layout
// close the gap to graphile-worker at the store level? Compares, on one
// connection, claim(limit) → completion of the whole batch until a queue of
// N is empty:
// - current: the store as it is (claimTaskRuns + completeTaskRuns);
// - split:   a prototype layout in the same database — queued runs in a narrow
//            queue table the claim deletes from, active runs in a narrow
//            lease table, and a task_runs copy with only its primary and
//            unique keys (fillfactor 70) so claim and completion can be HOT.
// Run: node bench/run.cjs experiments/queue-layout
import type { Pool } from 'pg';
import { createPool, migrate } from '@sluice/store';
import { databaseUrl, startTestPostgres, withAdmin } from '@sluice/testing';
import { queueTaskRuns } from '../lib/queue';
import { median, now } from '../peers/stats';
import { drainWithStore } from '../peers/store-ab';

const N = Number(process.env.BENCH_N ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const SPLIT_SCHEMA = `
DROP TABLE IF EXISTS x_leases, x_queue, x_runs;
CREATE TABLE x_runs (LIKE task_runs INCLUDING DEFAULTS) WITH (fillfactor = 70);
ALTER TABLE x_runs ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX ON x_runs (execution_id, task_id, attempt);
CREATE TABLE x_queue (task_run_id uuid PRIMARY KEY, available_at timestamptz(3) NOT NULL,
                      created_at timestamptz(3) NOT NULL, executor_type text NOT NULL, pool text NOT NULL);
CREATE INDEX ON x_queue (available_at, created_at, task_run_id, executor_type, pool);
CREATE TABLE x_leases (task_run_id uuid PRIMARY KEY, owner_id text NOT NULL, executor_type text NOT NULL,
                       pool text NOT NULL, heartbeat_at timestamptz(3) NOT NULL);
CREATE INDEX ON x_leases (executor_type, pool);`;

const SPLIT_FILL = `
TRUNCATE x_leases, x_queue, x_runs;
INSERT INTO x_runs SELECT * FROM task_runs;
INSERT INTO x_queue SELECT id, available_at, created_at, executor_type, pool FROM task_runs WHERE state = 'QUEUED';`;

// The limit goes into the text as in the store's claim (claim.ts): planned once per limit.
const splitClaim = (limit: number): string => `
WITH candidates AS (
  SELECT task_run_id FROM x_queue
  WHERE available_at <= now() AND executor_type = ANY($2::text[])
    AND (executor_type = 'inline' OR pool = ANY($3::text[]))
  ORDER BY available_at, created_at, task_run_id
  LIMIT ${limit}
  FOR UPDATE SKIP LOCKED
),
picked AS (
  DELETE FROM x_queue q USING candidates c WHERE q.task_run_id = c.task_run_id
  RETURNING q.task_run_id, q.executor_type, q.pool, q.available_at, q.created_at
),
leased AS (
  INSERT INTO x_leases (task_run_id, owner_id, executor_type, pool, heartbeat_at)
  SELECT task_run_id, $1, executor_type, pool, now() FROM picked
),
claimed AS (
  UPDATE x_runs t
  SET state = 'STARTING', fence = t.fence + 1, owner_id = $1, claimed_at = now(), heartbeat_at = now(), reason = NULL
  FROM picked p WHERE t.id = p.task_run_id
  RETURNING t.id, t.execution_id, t.task_id, t.attempt, t.fence, t.executor_type, t.pool, t.executor, t.spec,
            t.timeout_ms, p.available_at, p.created_at
)
SELECT id, execution_id, task_id, attempt, fence, executor_type, pool, executor, spec, timeout_ms
FROM claimed ORDER BY available_at, created_at, id`;

const SPLIT_COMPLETE = `
WITH done AS (
  UPDATE x_runs t
  SET state = c.state, reason = c.reason, exit_code = c.exit_code, error = c.error, ended_at = now()
  FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::int[], $6::text[])
       AS c(id, fence, state, reason, exit_code, error)
  WHERE t.id = c.id AND t.fence = c.fence AND (t.state IN ('STARTING', 'RUNNING')) IS TRUE
  RETURNING t.id, t.fence, t.state, t.reason, t.exit_code, t.error, t.ended_at
),
released AS (DELETE FROM x_leases l USING done WHERE l.task_run_id = done.id)
SELECT * FROM done`;

async function drainSplit(pool: Pool, limit: number): Promise<number> {
  let n = 0;
  for (;;) {
    const { rows } = await pool.query<{ id: string; fence: number }>({
      name: `x_claim_${limit}`,
      text: splitClaim(limit),
      values: ['bench', ['process'], ['default']],
    });
    if (rows.length === 0) return n;
    const { rowCount } = await pool.query({
      name: 'x_complete',
      text: SPLIT_COMPLETE,
      values: [
        rows.map((r) => r.id),
        rows.map((r) => r.fence),
        rows.map(() => 'SUCCEEDED'),
        rows.map(() => null),
        rows.map(() => 0),
        rows.map(() => null),
      ],
    });
    n += rowCount ?? 0;
  }
}

export async function main(): Promise<void> {
  const pg = await startTestPostgres();
  try {
    await withAdmin(pg.adminUrl, (c) => c.query('CREATE DATABASE layout'));
    const url = databaseUrl(pg.adminUrl, 'layout');
    await migrate(url);
    for (const limit of [1, 16]) {
      const rates: Record<string, number[]> = { current: [], split: [] };
      const hot: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        for (const layout of ['current', 'split'] as const) {
          await queueTaskRuns(url, N);
          const pool = createPool(url, { max: 1 });
          try {
            if (layout === 'split') {
              await pool.query(SPLIT_SCHEMA);
              await pool.query(SPLIT_FILL);
              for (const table of ['x_runs', 'x_queue', 'x_leases'])
                await pool.query(`VACUUM ANALYZE ${table}`);
            }
            const t0 = now();
            const done = await (layout === 'split' ? drainSplit : drainWithStore)(pool, limit);
            if (done !== N) throw new Error(`${layout}: ${done} of ${N}`);
            rates[layout]!.push(N / ((now() - t0) / 1000));
            if (layout === 'split') {
              // This connection did the updates: flush its statistics now rather than at some later idle moment.
              await pool.query('SELECT pg_stat_force_next_flush()');
              const { rows } = await pool.query<{ upd: string; hot: string }>(
                `SELECT n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot FROM pg_stat_user_tables WHERE relname = 'x_runs'`,
              );
              hot.push(Number(rows[0]?.hot) / Math.max(1, Number(rows[0]?.upd)));
            }
          } finally {
            await pool.end();
          }
        }
      }
      console.log(
        `limit ${limit}: current ${Math.round(median(rates.current!))} jobs/s, split ${Math.round(
          median(rates.split!),
        )} jobs/s, HOT share of x_runs updates ${median(hot).toFixed(2)}`,
      );
    }
  } finally {
    await pg.stop();
  }
}
