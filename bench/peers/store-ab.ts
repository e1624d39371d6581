// Before/after of the claim-store changes made for this benchmark, in one run
// on one connection: `before` sends the claim and the completion as unnamed
// statements (parsed and planned on every call) and completes each claimed
// run on its own, as the store did; `prepared` is claimTaskRuns +
// completeTaskRun per run (both named statements now); `after` is claimTaskRuns
// + one completeTaskRuns per claimed batch. Same SQL otherwise, so the
// differences are planning and round trips.
import type { Pool } from 'pg';
import {
  CLAIM_TASK_RUNS_SQL,
  claimTaskRuns,
  completeTaskRun,
  completeTaskRuns,
  createPool,
} from '@sluice/claim-store';
import { queueTaskRuns } from '../lib/queue';
import { median, now } from './stats';

// completeTaskRun's statement before it was prepared (the text is unchanged).
const OLD_COMPLETE_SQL = `
UPDATE task_runs
SET state = $3, reason = $4, exit_code = $5, error = $6, ended_at = now()
WHERE id = $1 AND fence = $2 AND state IN ('STARTING', 'RUNNING')
RETURNING *`;

export interface StoreAbResult {
  limit: number;
  jobs: number;
  beforeJobsPerSecond: number;
  preparedJobsPerSecond: number;
  afterJobsPerSecond: number;
  speedup: number;
}

async function before(pool: Pool, limit: number): Promise<number> {
  let n = 0;
  for (;;) {
    const { rows } = await pool.query<{ id: string; fence: number }>(CLAIM_TASK_RUNS_SQL, [
      'bench',
      ['process'],
      ['default'],
      limit,
    ]);
    if (rows.length === 0) return n;
    for (const r of rows) {
      await pool.query(OLD_COMPLETE_SQL, [r.id, r.fence, 'SUCCEEDED', null, 0, null]);
      n++;
    }
  }
}

async function prepared(pool: Pool, limit: number): Promise<number> {
  let n = 0;
  const claim = { ownerId: 'bench', executorTypes: ['process' as const], pools: ['default'], limit };
  for (;;) {
    const runs = await claimTaskRuns(pool, claim);
    if (runs.length === 0) return n;
    for (const r of runs) {
      await completeTaskRun(pool, { taskRunId: r.id, fence: r.fence, state: 'SUCCEEDED', exitCode: 0 });
      n++;
    }
  }
}

async function after(pool: Pool, limit: number): Promise<number> {
  let n = 0;
  const claim = { ownerId: 'bench', executorTypes: ['process' as const], pools: ['default'], limit };
  for (;;) {
    const runs = await claimTaskRuns(pool, claim);
    if (runs.length === 0) return n;
    const results = await completeTaskRuns(
      pool,
      runs.map((r) => ({ taskRunId: r.id, fence: r.fence, state: 'SUCCEEDED' as const, exitCode: 0 })),
    );
    n += results.filter((r) => r.status === 'fulfilled').length;
  }
}

/** Alternates before/after `rounds` times per claim limit; medians of jobs/s (claim + complete, one connection). */
export async function storeAb(
  url: string,
  jobs: number,
  limits: number[],
  rounds: number,
): Promise<StoreAbResult[]> {
  const results: StoreAbResult[] = [];
  for (const limit of limits) {
    const rates: Record<'before' | 'prepared' | 'after', number[]> = { before: [], prepared: [], after: [] };
    for (let r = 0; r < rounds; r++) {
      for (const [name, fn] of [
        ['before', before],
        ['prepared', prepared],
        ['after', after],
      ] as const) {
        await queueTaskRuns(url, jobs);
        const pool = createPool(url, { max: 1 });
        try {
          await pool.query('SELECT 1');
          const t0 = now();
          const done = await fn(pool, limit);
          if (done !== jobs) throw new Error(`store A/B ${name}: expected ${jobs} completions, got ${done}`);
          rates[name].push(jobs / ((now() - t0) / 1000));
        } finally {
          await pool.end();
        }
      }
    }
    const b = median(rates.before);
    const a = median(rates.after);
    results.push({
      limit,
      jobs,
      beforeJobsPerSecond: Math.round(b),
      preparedJobsPerSecond: Math.round(median(rates.prepared)),
      afterJobsPerSecond: Math.round(a),
      speedup: Number((a / b).toFixed(2)),
    });
  }
  return results;
}
