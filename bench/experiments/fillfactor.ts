// Experiment: does leaving room on task_runs pages (fillfactor) speed up the
// claim and the completion, whose updates cannot be HOT but could then write
// their new row version on the same page?
// Run: node bench/run.cjs experiments/fillfactor
import { createPool, migrate } from '@sluice/store';
import { databaseUrl, startTestPostgres, withAdmin } from '@sluice/testing';
import { queueTaskRuns } from '../lib/queue';
import { median, now } from '../peers/stats';
import { drainWithStore } from '../peers/store-ab';

const N = Number(process.env.BENCH_N ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FILLS = (process.env.BENCH_FILLS ?? '100,70').split(',').map(Number);

export async function main(): Promise<void> {
  const pg = await startTestPostgres();
  try {
    await withAdmin(pg.adminUrl, (c) => c.query('CREATE DATABASE fill'));
    const url = databaseUrl(pg.adminUrl, 'fill');
    await migrate(url);
    for (const limit of [1, 16]) {
      const rates = new Map<number, number[]>(FILLS.map((f) => [f, []]));
      for (let r = 0; r < ROUNDS; r++) {
        for (const fill of FILLS) {
          await withAdmin(url, (c) => c.query(`ALTER TABLE task_runs SET (fillfactor = ${fill})`));
          await queueTaskRuns(url, N);
          const pool = createPool(url, { max: 1 });
          try {
            const t0 = now();
            const done = await drainWithStore(pool, limit);
            if (done !== N) throw new Error(`fillfactor ${fill}: ${done} of ${N}`);
            rates.get(fill)!.push(N / ((now() - t0) / 1000));
          } finally {
            await pool.end();
          }
        }
      }
      console.log(
        `limit ${limit}: ` +
          FILLS.map((f) => `fillfactor ${f} ${Math.round(median(rates.get(f)!))} jobs/s`).join(', '),
      );
    }
  } finally {
    await pg.stop();
  }
}
