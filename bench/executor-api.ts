// Claims per second through the executor API: the built `sluice server`
// (not standalone) on one PostgreSQL, and 1, 4 and 8 executor *processes*,
// each looping claim(limit 1) → complete over HTTP with the typed client.
// Needs `pnpm build`. Run with `pnpm bench executor-api`.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '@sluice/store';
import { databaseUrl, freePort, startApp, startTestPostgres, withAdmin } from '@sluice/testing';
import { queueTaskRuns } from './lib/queue';

const N = Number(process.env.BENCH_N ?? 3000);
const PROCESSES = (process.env.BENCH_PROCESSES ?? '1,4,8').split(',').map(Number);
const root = path.resolve(__dirname, '..');

interface WorkerReport {
  jobs: number;
  startedAt: number;
  endedAt: number;
}

async function round(
  apiUrl: string,
  token: string,
  count: number,
): Promise<{ jobs: number; seconds: number }> {
  const workers = Array.from({ length: count }, (_, i) =>
    spawn(
      process.execPath,
      [
        '-r',
        path.join(__dirname, 'register.cjs'),
        path.join(__dirname, 'workers/executor-claimer.ts'),
        apiUrl,
        token,
        `bench-${i}`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    ),
  );
  const outputs = workers.map((w) => {
    let out = '';
    w.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    return () => out;
  });
  // Process start-up is not part of the figure: every worker registers first, then all start at once.
  while (!outputs.every((o) => o().includes('ready'))) await new Promise((r) => setTimeout(r, 20));
  for (const w of workers) w.stdin!.end('go\n');
  await Promise.all(workers.map((w) => new Promise((r) => w.once('exit', r))));
  const reports = outputs.map((o) => JSON.parse(o().trim().split('\n').pop()!) as WorkerReport);
  const jobs = reports.reduce((a, r) => a + r.jobs, 0);
  const seconds =
    (Math.max(...reports.map((r) => r.endedAt)) - Math.min(...reports.map((r) => r.startedAt))) / 1000;
  return { jobs, seconds };
}

export async function main(): Promise<void> {
  const pg = await startTestPostgres();
  const token = randomBytes(24).toString('hex');
  let server: Awaited<ReturnType<typeof startApp>> | undefined;
  try {
    await withAdmin(pg.adminUrl, (c) => c.query('CREATE DATABASE bench_executor_api'));
    const url = databaseUrl(pg.adminUrl, 'bench_executor_api');
    await migrate(url);
    const internalPort = await freePort();
    server = await startApp({
      main: path.join(root, 'apps/server/dist/main.js'),
      args: ['server'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        SLUICE_DATABASE_URL: url,
        AUTH_JWT_SECRET: randomBytes(32).toString('hex'),
        SLUICE_MASTER_KEYS: randomBytes(32).toString('base64'),
        PIPELINE_EXECUTOR_API_TOKEN: token,
        HTTP_SERVER_ADDR: `127.0.0.1:${await freePort()}`,
        INTERNAL_HTTP_SERVER_ADDR: `127.0.0.1:${internalPort}`,
        LOG_LEVEL: 'info',
      },
      readyWhen: 'server started',
    });
    const apiUrl = `http://127.0.0.1:${internalPort}`;
    const results = [];
    for (const count of PROCESSES) {
      await queueTaskRuns(url, N);
      const r = await round(apiUrl, token, count);
      if (r.jobs !== N) throw new Error(`expected ${N} claims, got ${r.jobs}`);
      results.push({
        processes: count,
        jobs: r.jobs,
        seconds: Number(r.seconds.toFixed(2)),
        claimsPerSecond: Math.round(r.jobs / r.seconds),
      });
      console.log(`executor processes=${count}: ${Math.round(r.jobs / r.seconds)} claim+complete/s`);
    }
    console.log('\n| executor processes | claims | seconds | claim+complete/s |');
    console.log('|---:|---:|---:|---:|');
    for (const r of results)
      console.log(`| ${r.processes} | ${r.jobs} | ${r.seconds} | ${r.claimsPerSecond} |`);
    const date = new Date().toISOString().slice(0, 10);
    const out = path.join(__dirname, 'results', `executor-api-${date}.json`);
    mkdirSync(path.dirname(out), { recursive: true });
    const machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version };
    writeFileSync(
      out,
      `${JSON.stringify({ bench: 'executor-api', date, n: N, machine, results }, null, 2)}\n`,
    );
    console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
  } finally {
    await server?.stop();
    await pg.stop();
  }
}
