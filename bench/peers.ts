// Sluice's claim store against graphile-worker and pg-boss on one PostgreSQL,
// in one run: drain throughput (N no-op jobs, C workers), enqueue →
// handler-start latency at a steady low rate, Sluice's claim latency at 1k vs
// 100k queued rows, and the before/after of the claim-store changes made for
// it. Run with `pnpm bench peers` (see bench/README.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseUrl, startTestPostgres, withAdmin } from '@sluice/testing';
import { claimDepth } from './peers/claim-depth';
import { storeAb } from './peers/store-ab';
import { GraphileSystem } from './peers/graphile';
import { PgBossSystem } from './peers/pgboss';
import { SluiceSystem } from './peers/sluice';
import { median, percentile, round } from './peers/stats';
import type { QueueSystem } from './peers/types';
import { markdown, type Summary } from './peers/report';

const list = (v: string | undefined, d: string) => (v ?? d).split(',').filter(Boolean).map(Number);
const N = list(process.env.BENCH_N, '10000');
const N_LARGE = Number(process.env.BENCH_N_LARGE ?? 100_000);
const CONCURRENCY = list(process.env.BENCH_CONCURRENCY, '1,4,16');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUNDS_LARGE = Number(process.env.BENCH_ROUNDS_LARGE ?? 1);
const LATENCY_RATE = Number(process.env.BENCH_LATENCY_RATE ?? 20);
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 5);
const LATENCY_WORKERS = 4;
const DEPTHS = list(process.env.BENCH_DEPTHS, '1000,100000');

const PG_SETTINGS = [
  'server_version',
  'fsync',
  'synchronous_commit',
  'full_page_writes',
  'shared_buffers',
  'work_mem',
  'max_connections',
  'wal_level',
  'random_page_cost',
  'jit',
];

export interface DrainSample {
  system: string;
  n: number;
  workers: number;
  round: number;
  seconds: number;
  jobsPerSecond: number;
}

async function createDb(adminUrl: string, name: string): Promise<string> {
  await withAdmin(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  return databaseUrl(adminUrl, name);
}

/** Round r starts the rotation at system r, so no system always goes first (warm caches, autovacuum debt). */
const rotate = <T>(xs: T[], r: number) => xs.map((_, i) => xs[(i + r) % xs.length]!);

async function drainCase(
  systems: QueueSystem[],
  n: number,
  workers: number,
  round: number,
  out: DrainSample[],
) {
  for (const s of rotate(systems, round)) {
    await s.enqueue(n);
    const seconds = await s.drain(n, workers);
    const sample = {
      system: s.name,
      n,
      workers,
      round,
      seconds: Number(seconds.toFixed(3)),
      jobsPerSecond: Math.round(n / seconds),
    };
    out.push(sample);
    console.log(`  round ${round + 1} N=${n} C=${workers} ${s.name}: ${sample.jobsPerSecond} jobs/s`);
  }
}

export async function main(): Promise<void> {
  const pg = await startTestPostgres();
  const started = Date.now();
  try {
    const sluiceUrl = await createDb(pg.adminUrl, 'bench_peers_sluice');
    const systems: QueueSystem[] = [
      new SluiceSystem(sluiceUrl, 'limit 1'),
      new SluiceSystem(sluiceUrl, 'batch'),
      new GraphileSystem(await createDb(pg.adminUrl, 'bench_peers_graphile'), true),
      new GraphileSystem(await createDb(pg.adminUrl, 'bench_peers_graphile_direct'), false),
      new PgBossSystem(await createDb(pg.adminUrl, 'bench_peers_pgboss')),
    ];
    const settings = await withAdmin(sluiceUrl, async (c) => {
      const rows: Record<string, string> = {};
      for (const name of PG_SETTINGS) rows[name] = (await c.query(`SHOW ${name}`)).rows[0][name];
      return rows;
    });
    console.log('PostgreSQL:', settings);
    await systems[0]!.setup(); // both Sluice shapes share one database
    for (const s of systems.slice(2)) await s.setup();

    const drains: DrainSample[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const n of N) for (const c of CONCURRENCY) await drainCase(systems, n, c, r, drains);
    }
    if (N_LARGE > 0) {
      // The 100k case runs BENCH_ROUNDS_LARGE (1) time(s), at the highest C, without the
      // limit-1 loop (the slowest shape, ~2 min alone), to keep a default run near 13 min.
      const large = systems.filter((s) => s.name !== 'sluice (limit 1)');
      for (let r = 0; r < ROUNDS_LARGE; r++) {
        await drainCase(large, N_LARGE, Math.max(...CONCURRENCY), r, drains);
      }
    }

    const latencies: Record<string, number[]> = {};
    for (let r = 0; r < ROUNDS; r++) {
      // Latency needs a wake-up; `sluice (limit 1)` is the same store with a plain loop, so only the instance shape runs.
      for (const s of rotate(systems.slice(1), r)) {
        const ms = await s.latency(LATENCY_RATE, LATENCY_SECONDS, LATENCY_WORKERS);
        (latencies[s.name] ??= []).push(...ms);
        console.log(`  round ${r + 1} latency ${s.name}: p50 ${round(percentile(ms, 0.5))} ms`);
      }
    }

    console.log('  claim latency vs queue depth');
    const depth = await claimDepth(sluiceUrl, DEPTHS, [1, 16], 300);
    console.log('  claim store before/after');
    const store = await storeAb(sluiceUrl, Math.min(5000, N[0] ?? 5000), [1, 16], ROUNDS);
    for (const s of systems) await s.close();

    const summary: Summary = {
      drain: [],
      latency: Object.entries(latencies).map(([system, ms]) => ({
        system,
        jobs: ms.length,
        p50Ms: round(percentile(ms, 0.5)),
        p95Ms: round(percentile(ms, 0.95)),
        p99Ms: round(percentile(ms, 0.99)),
      })),
      depth,
      store,
    };
    const cases = [...new Set(drains.map((d) => `${d.n}/${d.workers}`))];
    for (const key of cases) {
      const [n, workers] = key.split('/').map(Number) as [number, number];
      const bySystem: Record<string, number> = {};
      for (const s of systems) {
        const xs = drains.filter((d) => d.n === n && d.workers === workers && d.system === s.name);
        if (xs.length > 0) bySystem[s.name] = Math.round(median(xs.map((d) => d.jobsPerSecond)));
      }
      summary.drain.push({
        n,
        workers,
        rounds: Math.max(...drains.filter((d) => d.n === n && d.workers === workers).map((d) => d.round)) + 1,
        jobsPerSecond: bySystem,
      });
    }

    const machine = {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memoryGb: round(os.totalmem() / 2 ** 30),
      node: process.version,
      postgres: settings,
    };
    const table = markdown(summary);
    console.log(`\n${table}`);
    const date = new Date().toISOString().slice(0, 10);
    const out = path.join(__dirname, 'results', `peers-${date}.json`);
    mkdirSync(path.dirname(out), { recursive: true });
    const config = {
      N,
      N_LARGE,
      CONCURRENCY,
      ROUNDS,
      ROUNDS_LARGE,
      LATENCY_RATE,
      LATENCY_SECONDS,
      LATENCY_WORKERS,
      DEPTHS,
    };
    const systemSettings = Object.fromEntries(systems.map((s) => [s.name, s.settings]));
    writeFileSync(
      out,
      `${JSON.stringify({ bench: 'peers', date, wallSeconds: Math.round((Date.now() - started) / 1000), config, machine, systems: systemSettings, summary, samples: drains }, null, 2)}\n`,
    );
    console.log(
      `\nwrote ${path.relative(process.cwd(), out)} (${Math.round((Date.now() - started) / 1000)} s)`,
    );
  } finally {
    await pg.stop();
  }
}
