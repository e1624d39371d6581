// Pickup latency on the process executor: queued → task command started,
// measured from the task run's own timestamps (created_at → started_at, both
// written by the one PostgreSQL), with standby runners (the default) and
// without (SLUICE_STANDBY_RUNNERS=0), next to the floor measured in the same
// run: spawning `node -e 0` until it exits. Needs `pnpm build` (it starts the
// real `sluice server --standalone`). Run with `pnpm bench pickup-latency`.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createUserToken } from '@sluice/auth';
import { migrate } from '@sluice/store';
import { databaseUrl, freePort, startTestPostgres, withAdmin, type TestPostgres } from '@sluice/testing';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
/** Idle time between the rounds of the "spaced" measurement: enough for a standby to be ready. */
const SPACED_PAUSE_MS = 1_000;
const root = path.resolve(__dirname, '..');

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
};
const round1 = (n: number) => Math.round(n * 10) / 10;

function spawnFloor(): number[] {
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const t0 = process.hrtime.bigint();
    spawnSync(process.execPath, ['-e', '0']);
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return samples;
}

interface Setup {
  /** SLUICE_STANDBY_RUNNERS; undefined leaves the server's default. */
  standbyRunners?: number;
  /** Idle time after each round; 0 runs the rounds back to back, like the tasks of a chain. */
  pauseMs: number;
}

/** Runs the one-task flow ROUNDS times on a fresh standalone server; returns each pickup (ms). */
async function measurePickup(pg: TestPostgres, db: string, setup: Setup): Promise<number[]> {
  const { standbyRunners, pauseMs } = setup;
  await withAdmin(pg.adminUrl, (c) => c.query(`CREATE DATABASE ${db}`));
  const url = databaseUrl(pg.adminUrl, db);
  await migrate(url);
  const secret = randomBytes(32).toString('hex');
  const [httpPort, internalPort] = [await freePort(), await freePort()];
  const server = spawn(
    process.execPath,
    [path.join(root, 'apps/server/dist/main.js'), 'server', '--standalone'],
    {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        SLUICE_DATABASE_URL: url,
        AUTH_JWT_SECRET: secret,
        SLUICE_MASTER_KEYS: randomBytes(32).toString('base64'),
        HTTP_SERVER_ADDR: `127.0.0.1:${httpPort}`,
        INTERNAL_HTTP_SERVER_ADDR: `127.0.0.1:${internalPort}`,
        LOG_LEVEL: 'warn',
        ...(standbyRunners === undefined ? {} : { SLUICE_STANDBY_RUNNERS: String(standbyRunners) }),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const api = `http://127.0.0.1:${httpPort}/api/v1`;
  const token = await createUserToken(secret, { user: 'bench', workspace: 'bench', role: 'admin' });
  const headers = { authorization: `Bearer ${token}` };
  for (let i = 0; ; i += 1) {
    try {
      if ((await fetch(`${api}/executors`, { headers })).ok) break;
    } catch {
      // not listening yet
    }
    if (i > 300) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  await fetch(`${api}/namespaces/bench/flows/noop`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/yaml' },
    body: 'tasks:\n  - id: noop\n    type: command\n    command: ["true"]\n',
  });
  const client = new Client({ connectionString: url });
  await client.connect();
  const pickup: number[] = [];
  try {
    // One more round than counted: the first claim of a server starts its standby.
    for (let i = 0; i <= ROUNDS; i += 1) {
      const res = await fetch(`${api}/namespaces/bench/flows/noop/executions`, { method: 'POST', headers });
      const { id } = (await res.json()) as { id: string };
      for (;;) {
        const r = await client.query<{ state: string; ms: number | null }>(
          `SELECT e.state, EXTRACT(EPOCH FROM (t.started_at - t.created_at)) * 1000 AS ms
           FROM executions e JOIN task_runs t ON t.execution_id = e.id WHERE e.id = $1`,
          [id],
        );
        const row = r.rows[0];
        if (row && ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(row.state)) {
          if (row.state !== 'SUCCEEDED' || row.ms === null)
            throw new Error(`execution ${id} ended ${row.state}`);
          if (i > 0) pickup.push(Number(row.ms));
          break;
        }
        await new Promise((r2) => setTimeout(r2, 20));
      }
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    }
  } finally {
    await client.end();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  }
  return pickup;
}

export async function main(): Promise<void> {
  const pg = await startTestPostgres();
  let chained: number[];
  let spaced: number[];
  let fresh: number[];
  try {
    chained = await measurePickup(pg, 'bench_pickup_chained', { pauseMs: 0 });
    spaced = await measurePickup(pg, 'bench_pickup_spaced', { pauseMs: SPACED_PAUSE_MS });
    fresh = await measurePickup(pg, 'bench_pickup_fresh', { standbyRunners: 0, pauseMs: 0 });
  } finally {
    await pg.stop();
  }
  const floor = spawnFloor();
  const stats = (xs: number[]) => ({ p50: round1(pct(xs, 0.5)), p99: round1(pct(xs, 0.99)) });
  const result = {
    benchmark: 'pickup-latency',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    rounds: ROUNDS,
    pickupMs: {
      standbyBackToBack: stats(chained),
      standbySpaced: stats(spaced),
      freshRunnerBackToBack: stats(fresh),
    },
    spawnFloorMs: stats(floor),
  };
  console.table([
    { measure: 'standby runner (default), back to back', ...result.pickupMs.standbyBackToBack },
    { measure: `standby runner (default), ${SPACED_PAUSE_MS} ms apart`, ...result.pickupMs.standbySpaced },
    {
      measure: 'fresh runner (SLUICE_STANDBY_RUNNERS=0), back to back',
      ...result.pickupMs.freshRunnerBackToBack,
    },
    { measure: 'floor: spawn `node -e 0` to exit', ...result.spawnFloorMs },
  ]);
  const dir = path.join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `pickup-latency-${result.date.slice(0, 10)}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written ${path.relative(root, file)}`);
}
