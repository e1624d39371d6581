// List latency of the public API at 100,000 executions: GET /executions (the
// first page, a page filtered by namespace, flow and state, and a page deep in
// the cursor chain) next to its peer measured in the same run, GET
// /executions/{id} of one execution. The executions are bulk-inserted through
// the store's pool; the server is the built `sluice server --standalone`
// (needs `pnpm build`). Run with `pnpm bench list-latency` (bench/README.md).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createUserToken } from '@sluice/auth';
import { createPool, getExecutionInWorkspace, listExecutions, migrate } from '@sluice/store';
import { databaseUrl, freePort, startTestPostgres, withAdmin } from '@sluice/testing';

const N = Number(process.env.BENCH_N ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
/** The deep page starts after this many executions (reached by following nextCursor). */
const DEEP = Math.floor(N * 0.9);
const PAGE = 50;
const root = path.resolve(__dirname, '..');

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
};
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * N executions of workspace `bench` over 10 namespaces × 10 flows, one a
 * minute back from now, every tenth FAILED, the rest SUCCEEDED; then ANALYZE.
 */
async function insertExecutions(url: string): Promise<void> {
  const pool = createPool(url, { max: 1 });
  try {
    await pool.query(
      `INSERT INTO executions (id, workspace, namespace, flow_id, definition, state, trigger,
                               created_at, started_at, ended_at)
       SELECT gen_random_uuid(), 'bench', 'ns-' || (i % 10), 'flow-' || ((i / 10) % 10), '{"tasks":[]}',
              CASE WHEN i % 10 = 3 THEN 'FAILED' ELSE 'SUCCEEDED' END, 'api',
              now() - i * interval '1 minute', now() - i * interval '1 minute',
              now() - i * interval '1 minute' + interval '2 seconds'
       FROM generate_series(1, $1) AS i`,
      [N],
    );
    await pool.query('VACUUM ANALYZE executions');
  } finally {
    await pool.end();
  }
}

export async function main(): Promise<void> {
  const pg = await startTestPostgres();
  const db = 'bench_list_latency';
  await withAdmin(pg.adminUrl, (c) => c.query(`CREATE DATABASE ${db}`));
  const url = databaseUrl(pg.adminUrl, db);
  await migrate(url);
  const t0 = Date.now();
  await insertExecutions(url);
  const insertSeconds = (Date.now() - t0) / 1000;

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
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const api = `http://127.0.0.1:${httpPort}/api/v1`;
  const token = await createUserToken(secret, { user: 'bench', workspace: 'bench', role: 'member' });
  const headers = { authorization: `Bearer ${token}` };
  const get = async (pathAndQuery: string) => {
    const res = await fetch(`${api}${pathAndQuery}`, { headers });
    if (!res.ok) throw new Error(`GET ${pathAndQuery}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { executions?: Array<{ id: string }>; nextCursor?: string | null };
  };
  try {
    for (let i = 0; ; i += 1) {
      try {
        if ((await fetch(`${api}/executors`, { headers })).ok) break;
      } catch {
        // not listening yet
      }
      if (i > 300) throw new Error('server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    // The deep cursor: nextCursor after DEEP executions, reached as a client would (pages of 500).
    let cursor: string | null | undefined;
    const walkStarted = Date.now();
    for (let seen = 0; seen < DEEP; seen += 500) {
      const page = await get(`/executions?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
      cursor = page.nextCursor;
      if (!cursor) throw new Error(`the list ended after ${seen} executions`);
    }
    const walkSeconds = (Date.now() - walkStarted) / 1000;
    const first = await get(`/executions?limit=1`);
    const oneId = first.executions?.[0]?.id;
    if (!oneId) throw new Error('no execution listed');

    const calls: Record<string, string> = {
      'first page': `/executions?limit=${PAGE}`,
      'filtered page (namespace, flow, state)': `/executions?namespace=ns-3&flow=flow-0&state=FAILED&limit=${PAGE}`,
      [`deep page (cursor after ${DEEP})`]: `/executions?limit=${PAGE}&cursor=${cursor}`,
      'peer: GET /executions/{id}': `/executions/${oneId}`,
    };
    const filtered = await get(calls['filtered page (namespace, flow, state)']!);
    if ((filtered.executions?.length ?? 0) === 0) throw new Error('the filtered page is empty');
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(calls).map((k) => [k, []]));
    // Warm-up, then the kinds interleaved round by round, so they share the machine's noise.
    for (const call of Object.values(calls)) for (let i = 0; i < 10; i += 1) await get(call);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, call] of Object.entries(calls)) {
        const t = process.hrtime.bigint();
        await get(call);
        samples[name]!.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }
    // The same four reads through the store alone (the SQL the routes run, without HTTP and JSON).
    const pool = createPool(url, { max: 1 });
    const key = (
      await pool.query<{ created_at: Date; id: string }>(
        `SELECT created_at, id FROM executions ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1`,
        [DEEP - 1],
      )
    ).rows[0]!;
    const ws = { workspace: 'bench' };
    const reads: Record<string, () => Promise<unknown>> = {
      'store: first page': () => listExecutions(pool, ws, { limit: PAGE + 1 }),
      'store: filtered page': () =>
        listExecutions(
          pool,
          { ...ws, namespace: 'ns-3', flowId: 'flow-0', state: 'FAILED' },
          { limit: PAGE + 1 },
        ),
      'store: deep page': () =>
        listExecutions(pool, ws, { limit: PAGE + 1, after: { createdAt: key.created_at, id: key.id } }),
      'store peer: one execution by id': () => getExecutionInWorkspace(pool, 'bench', oneId),
    };
    for (const read of Object.values(reads)) for (let i = 0; i < 10; i += 1) await read();
    for (const name of Object.keys(reads)) samples[name] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, read] of Object.entries(reads)) {
        const t = process.hrtime.bigint();
        await read();
        samples[name]!.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }
    await pool.end();
    const rows = Object.entries(samples).map(([measure, xs]) => ({
      measure,
      p50Ms: round2(pct(xs, 0.5)),
      p99Ms: round2(pct(xs, 0.99)),
    }));
    const result = {
      bench: 'list-latency',
      date: new Date().toISOString(),
      machine: `${os.cpus().length} cores, ${os.platform()} ${os.release()}, Node ${process.version}`,
      loadAverage: os.loadavg().map(round2),
      executions: N,
      rounds: ROUNDS,
      pageSize: PAGE,
      insertSeconds: round2(insertSeconds),
      deepWalkSeconds: round2(walkSeconds),
      rows,
    };
    const dir = path.join(root, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `list-latency-${result.date.slice(0, 10)}.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    console.log(
      `${N} executions inserted in ${result.insertSeconds} s; deep cursor reached in ${result.deepWalkSeconds} s`,
    );
    console.log('| measure | p50 ms | p99 ms |\n| --- | ---: | ---: |');
    for (const r of rows) console.log(`| ${r.measure} | ${r.p50Ms} | ${r.p99Ms} |`);
    console.log(`written to ${path.relative(root, file)}`);
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    await pg.stop();
  }
}
