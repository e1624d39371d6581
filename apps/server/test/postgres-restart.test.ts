import { setTimeout as sleep } from 'node:timers/promises';
import {
  eventually,
  explained,
  startRestartablePostgres,
  withAdmin,
  type RestartablePostgres,
} from '@sluice/testing';
import { adminToken, apiClient, ended, startStandalone, type StandaloneServer } from './standalone';

/*
 * PostgreSQL restarts while executions run on a standalone server with the
 * process executor: the server answers not-ready while the database is down,
 * then it (its API, jobs and embedded instance) reconnects, and every task
 * run ends once, successfully, with every log line its task printed exactly
 * once. The database is the test's own: the run's shared one is never stopped.
 */

const LINES = 50;
const FLOWS = ['count-a', 'count-b', 'count-c'];
const RUNS_PER_FLOW = 2;
const OUTAGE_MS = 5_000;

// `slow` prints over ~10 s, so the outage falls in the middle of it; `after`
// starts only when the engine advances the execution past the outage.
const FLOW = `
tasks:
  - id: slow
    type: command
    command: ["sh", "-c", "for i in $(seq 1 ${LINES}); do echo line-$i; sleep 0.2; done"]
  - id: after
    type: command
    command: ["sh", "-c", "for i in $(seq 1 ${LINES}); do echo line-$i; done"]
    depends_on: [slow]
`;

let pg: RestartablePostgres;
let databaseUrl: string;
let server: StandaloneServer;
let api: ReturnType<typeof apiClient>;

beforeAll(async () => {
  pg = await startRestartablePostgres();
  await withAdmin(pg.adminUrl, (c) => c.query('CREATE DATABASE sluice'));
  databaseUrl = pg.urlFor('sluice');
  server = await startStandalone(databaseUrl, {
    // Far longer than the outage: a task run that heartbeats again afterwards must not be lost.
    PIPELINE_HEARTBEAT_TIMEOUT: '60s',
    PIPELINE_DEFAULT_MAX_ATTEMPTS: '3',
    SLUICE_WORKER_SLOTS: '8',
  });
  api = apiClient(server.publicUrl, await adminToken());
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await pg?.stop();
});

async function readyStatus(): Promise<number | null> {
  try {
    const res = await fetch(`${server.internalUrl}/ready`, { signal: AbortSignal.timeout(2_000) });
    await res.text();
    return res.status;
  } catch {
    return null;
  }
}

test('a PostgreSQL restart mid-run loses no task run and no log line', async () => {
  for (const flow of FLOWS) expect((await api.putFlow('etl', flow, FLOW)).status).toBeLessThan(300);
  const ids: string[] = [];
  for (const flow of FLOWS) for (let i = 0; i < RUNS_PER_FLOW; i += 1) ids.push(await api.run('etl', flow));

  // Every `slow` task is running and has printed part of its lines.
  await explained({ server }, () =>
    eventually(
      'every slow task running and printing',
      async () => {
        for (const id of ids) {
          const run = (await api.execution(id)).taskRuns.find((r) => r.taskId === 'slow');
          if (run?.state !== 'RUNNING') return false;
          const logs = await api.logs(run.id);
          if (!logs.some((l) => l.line === 'line-5')) return false;
        }
        return true;
      },
      60_000,
      200,
    ),
  );
  expect(await readyStatus()).toBe(200);

  await pg.stopPostgres('fast');
  const downSince = Date.now();
  const duringOutage: Array<number | null> = [];
  while (Date.now() - downSince < OUTAGE_MS) {
    duringOutage.push(await readyStatus());
    await sleep(250);
  }
  await pg.startPostgres();

  // Not ready while the database was down: 503, never 200 (and the server kept answering).
  expect(duringOutage).toContain(503);
  expect(duringOutage).not.toContain(200);
  expect(duringOutage).not.toContain(null);

  await explained({ server }, () =>
    eventually('ready again', async () => (await readyStatus()) === 200, 30_000, 200),
  );
  const finals = await explained({ server }, () =>
    Promise.all(ids.map((id) => api.waitFor(id, ended, 90_000))),
  );
  expect(server.proc.exitCode).toBeNull();

  const expected = Array.from({ length: LINES }, (_, i) => `line-${i + 1}`);
  for (const execution of finals) {
    expect({ id: execution.id, state: execution.state }).toEqual({ id: execution.id, state: 'SUCCEEDED' });
    // One attempt per task, ended once, successfully: nothing was lost, retried or finished twice.
    const tasks = execution.taskRuns.map((r) => [r.taskId, r.attempt, r.state, r.reason]);
    expect(tasks.sort()).toEqual([
      ['after', 1, 'SUCCEEDED', null],
      ['slow', 1, 'SUCCEEDED', null],
    ]);
    for (const run of execution.taskRuns) {
      const logs = await api.logs(run.id);
      expect({
        taskRun: run.id,
        lines: logs.filter((l) => l.stream === 'stdout').map((l) => l.line),
      }).toEqual({ taskRun: run.id, lines: expected });
      const seqs = logs.map((l) => l.seq);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    }
  }

  // Each task run ended exactly once: one task_run.ended event each, all of them processed.
  const endings = await withAdmin(databaseUrl, (c) =>
    c.query<{ task_run_id: string; n: string; unprocessed: string }>(
      `SELECT payload->>'taskRunId' AS task_run_id, count(*) AS n,
              count(*) FILTER (WHERE processed_at IS NULL) AS unprocessed
         FROM events WHERE kind = 'task_run.ended' GROUP BY 1`,
    ),
  );
  const runIds = finals.flatMap((e) => e.taskRuns.map((r) => r.id)).sort();
  expect(endings.rows.map((r) => r.task_run_id).sort()).toEqual(runIds);
  for (const row of endings.rows)
    expect({ ...row, n: Number(row.n), unprocessed: Number(row.unprocessed) }).toEqual({
      task_run_id: row.task_run_id,
      n: 1,
      unprocessed: 0,
    });
}, 240_000);
