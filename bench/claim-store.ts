// Claim throughput of the claim store: N queued task runs, C claimers each
// looping claim(limit 1) → complete(SUCCEEDED) on its own connection, for
// C = 1, 4, 16. Run with `pnpm bench claim-store` (see bench/README.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claimTaskRuns, createPool, migrate } from '@sluice/store';
import { completeTaskRun } from './lib/completions';
import { databaseUrl, startTestPostgres, withAdmin } from '@sluice/testing';
import { queueTaskRuns } from './lib/queue';

const N = Number(process.env.BENCH_N ?? 10_000);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,4,16').split(',').map(Number);

interface Result {
  claimers: number;
  jobs: number;
  seconds: number;
  jobsPerSecond: number;
  claimP50Ms: number;
  claimP95Ms: number;
  emptyClaims: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

async function run(url: string, claimers: number): Promise<Result> {
  await queueTaskRuns(url, N);
  const pools = Array.from({ length: claimers }, () => createPool(url, { max: 1 }));
  await Promise.all(pools.map((p) => p.query('SELECT 1'))); // connect before the clock starts
  const claimMs: number[] = [];
  let emptyClaims = 0;
  const started = process.hrtime.bigint();
  const done = await Promise.all(
    pools.map(async (pool, n) => {
      let jobs = 0;
      for (;;) {
        const t0 = process.hrtime.bigint();
        const [run] = await claimTaskRuns(pool, {
          ownerId: `bench-${n}`,
          executorTypes: ['process', 'inline'],
          pools: ['default'],
          limit: 1,
        });
        claimMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (!run) {
          emptyClaims++;
          return jobs;
        }
        await completeTaskRun(pool, { taskRunId: run.id, fence: run.fence, state: 'SUCCEEDED', exitCode: 0 });
        jobs++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await Promise.all(pools.map((p) => p.end()));
  const jobs = done.reduce((a, b) => a + b, 0);
  if (jobs !== N) throw new Error(`expected ${N} jobs to complete, got ${jobs}`);
  claimMs.sort((a, b) => a - b);
  return {
    claimers,
    jobs,
    seconds: Number(seconds.toFixed(2)),
    jobsPerSecond: Math.round(jobs / seconds),
    claimP50Ms: Number(percentile(claimMs, 0.5).toFixed(2)),
    claimP95Ms: Number(percentile(claimMs, 0.95).toFixed(2)),
    emptyClaims,
  };
}

export async function main(): Promise<void> {
  const pg = await startTestPostgres();
  try {
    await withAdmin(pg.adminUrl, (c) => c.query('CREATE DATABASE bench_claim_store'));
    const url = databaseUrl(pg.adminUrl, 'bench_claim_store');
    await migrate(url);
    const version = await withAdmin(
      url,
      async (c) => (await c.query('SHOW server_version')).rows[0].server_version,
    );

    const results: Result[] = [];
    for (const c of CONCURRENCY) {
      const r = await run(url, c);
      results.push(r);
      console.log(`claimers=${c}: ${r.jobsPerSecond} jobs/s`);
    }

    console.log('\n| claimers | jobs | seconds | jobs/s | claim p50 ms | claim p95 ms |');
    console.log('|---:|---:|---:|---:|---:|---:|');
    for (const r of results) {
      console.log(
        `| ${r.claimers} | ${r.jobs} | ${r.seconds} | ${r.jobsPerSecond} | ${r.claimP50Ms} | ${r.claimP95Ms} |`,
      );
    }

    const date = new Date().toISOString().slice(0, 10);
    const out = path.join(__dirname, 'results', `claim-store-${date}.json`);
    mkdirSync(path.dirname(out), { recursive: true });
    const machine = {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      node: process.version,
      postgres: version,
    };
    writeFileSync(
      out,
      `${JSON.stringify({ bench: 'claim-store', date, n: N, machine, results }, null, 2)}\n`,
    );
    console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
  } finally {
    await pg.stop();
  }
}
