// Pickup latency on an executor instance that has no database (a
// `docker-executor` running the process executor, in this process) against
// the built `sluice server`: queued → command started, with the NOTIFY
// wake-up relayed by the server's long poll, and with polling only
// (SLUICE_QUEUE_POLL_INTERVAL = 1 s), in one run. Needs `pnpm build`.
// Run with `pnpm bench pickup-wakeup`.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from 'pg';
import { createUserToken } from '@sluice/auth';
import { migrate } from '@sluice/store';
import { parseEnv } from '@sluice/config';
import { startExecutorInstance } from '@sluice/executor-runtime';
import {
  apiClient,
  baseEnv,
  databaseUrl,
  freePort,
  startApp,
  startTestPostgres,
  withAdmin,
} from '@sluice/testing';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const POLL = process.env.BENCH_POLL_INTERVAL ?? '1s';
const root = path.resolve(__dirname, '..');

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;

export async function main(): Promise<void> {
  const pg = await startTestPostgres();
  const apiToken = randomBytes(24).toString('hex');
  const jwtSecret = randomBytes(32).toString('hex');
  let server: Awaited<ReturnType<typeof startApp>> | undefined;
  try {
    await withAdmin(pg.adminUrl, (c) => c.query('CREATE DATABASE bench_wakeup'));
    const url = databaseUrl(pg.adminUrl, 'bench_wakeup');
    await migrate(url);
    const [httpPort, internalPort] = [await freePort(), await freePort()];
    server = await startApp({
      main: path.join(root, 'apps/server/dist/main.js'),
      args: ['server'],
      env: {
        ...baseEnv(),
        SLUICE_DATABASE_URL: url,
        AUTH_JWT_SECRET: jwtSecret,
        SLUICE_MASTER_KEYS: randomBytes(32).toString('base64'),
        PIPELINE_EXECUTOR_API_TOKEN: apiToken,
        HTTP_SERVER_ADDR: `127.0.0.1:${httpPort}`,
        INTERNAL_HTTP_SERVER_ADDR: `127.0.0.1:${internalPort}`,
      },
      readyWhen: 'server started',
    });
    const api = apiClient(
      `http://127.0.0.1:${httpPort}`,
      await createUserToken(jwtSecret, { user: 'b', workspace: 'b', role: 'admin' }),
    );
    await api.putFlow('bench', 'noop', 'tasks:\n  - id: noop\n    type: command\n    command: ["true"]\n');
    const pgClient = new Client({ connectionString: url });
    await pgClient.connect();
    const results: Record<string, { p50: number; p99: number }> = {};
    for (const mode of ['notify', 'poll'] as const) {
      const env = {
        ...baseEnv(),
        SLUICE_EXECUTORS: 'process',
        DOCKER_EXECUTOR_OWNER_ID: `bench-${mode}`,
        EXECUTOR_API_URL: `http://127.0.0.1:${internalPort}`,
        EXECUTOR_API_TOKEN: apiToken,
        INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0',
        SLUICE_QUEUE_POLL_INTERVAL: POLL,
        LOG_LEVEL: 'warn',
      };
      const instance = await startExecutorInstance({
        app: 'docker-executor',
        config: parseEnv('docker-executor', env),
        version: 'bench',
        runnerCommand: [process.execPath, path.join(root, 'apps/docker-executor/dist/main.js'), 'exec'],
        env,
        logStream: new PassThrough().resume(),
        wakeOnQueuedWork: mode === 'notify',
      });
      const samples: number[] = [];
      try {
        for (let i = 0; i < ROUNDS; i += 1) {
          // Start at a random phase of the poll timer, as real work arrives.
          await new Promise((r) => setTimeout(r, Math.random() * 300));
          const id = await api.run('bench', 'noop');
          for (;;) {
            const r = await pgClient.query<{ ms: number | null }>(
              `SELECT EXTRACT(EPOCH FROM (started_at - created_at)) * 1000 AS ms FROM task_runs WHERE execution_id = $1`,
              [id],
            );
            if (r.rows[0]?.ms != null) {
              samples.push(Number(r.rows[0].ms));
              break;
            }
            await new Promise((r2) => setTimeout(r2, 10));
          }
        }
      } finally {
        await instance.stop();
      }
      results[mode] = { p50: Math.round(pct(samples, 0.5)), p99: Math.round(pct(samples, 0.99)) };
      console.log(`${mode}: p50 ${results[mode]!.p50} ms, p99 ${results[mode]!.p99} ms`);
    }
    await pgClient.end();
    console.log('\n| wake-up | pickup p50 ms | pickup p99 ms |');
    console.log('|---|---:|---:|');
    console.log(`| NOTIFY relayed by long poll | ${results.notify!.p50} | ${results.notify!.p99} |`);
    console.log(`| polling only (${POLL}) | ${results.poll!.p50} | ${results.poll!.p99} |`);
    const date = new Date().toISOString().slice(0, 10);
    const out = path.join(__dirname, 'results', `pickup-wakeup-${date}.json`);
    mkdirSync(path.dirname(out), { recursive: true });
    const machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version };
    writeFileSync(
      out,
      `${JSON.stringify({ bench: 'pickup-wakeup', date, rounds: ROUNDS, pollInterval: POLL, machine, results }, null, 2)}\n`,
    );
    console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
  } finally {
    await server?.stop();
    await pg.stop();
  }
}
