import { setTimeout as sleep } from 'node:timers/promises';
import {
  eventually,
  explained,
  logLines,
  startExecutor,
  startJobs,
  startRestartablePostgres,
  startServer,
  withAdmin,
  type AppProcess,
  type RestartablePostgres,
} from '@sluice/testing';
import { adminToken, apiClient, ended, startStandalone } from './standalone';

/*
 * PostgreSQL restarts while executions run on the process executor, once on
 * a standalone server and once on the distributed topology (server, jobs,
 * executor): every process that reaches the database answers not-ready while
 * it is down, then reconnects, and every task run ends once, successfully,
 * with every log line its task printed exactly once. The database is the
 * test's own: the run's shared one is never stopped.
 */

const LINES = 50;
// Each flow's first task prints at its own pace (about 10, 5 and 2.5 s), so
// the outage catches task runs in the middle of their output and others
// posting their result.
const FLOWS = { 'count-slow': 0.2, 'count-medium': 0.1, 'count-fast': 0.05 };
const RUNS_PER_FLOW = 2;
const OUTAGE_MS = 5_000;
const TIMING = {
  // Far longer than the outage (heartbeats every 10 s): a task run that heartbeats again afterwards is not lost.
  PIPELINE_HEARTBEAT_TIMEOUT: '30s',
  PIPELINE_JOB_WATCHDOG_INTERVAL: '1s',
  PIPELINE_DEFAULT_MAX_ATTEMPTS: '3',
};

// `after` starts only when the engine advances the execution past `first`.
const flowYaml = (pause: number) => `
tasks:
  - id: first
    type: command
    command: ["sh", "-c", "for i in $(seq 1 ${LINES}); do echo line-$i; sleep ${pause}; done"]
  - id: after
    type: command
    command: ["sh", "-c", "for i in $(seq 1 ${LINES}); do echo line-$i; done"]
    depends_on: [first]
`;

let pg: RestartablePostgres;

beforeAll(async () => {
  pg = await startRestartablePostgres();
}, 60_000);

afterAll(async () => {
  await pg?.stop();
});

async function status(url: string): Promise<number | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await res.text();
    return res.status;
  } catch {
    return null;
  }
}

async function createDatabase(name: string): Promise<string> {
  await withAdmin(pg.adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  return pg.urlFor(name);
}

/** The internal URL a `sluice jobs` logged on start (it listens on a free port). */
function jobsInternalUrl(jobs: AppProcess): string {
  const started = logLines(jobs.output()).find((l) => l.message === 'jobs started');
  return String(started?.internal);
}

interface Running {
  databaseUrl: string;
  publicUrl: string;
  /** /ready of every process that reaches the database. */
  readyUrls: string[];
  processes: Record<string, AppProcess>;
  /** `fast`: an operator's restart (sessions ended cleanly); `immediate`: a crash, recovered on start. */
  stopMode: 'fast' | 'immediate';
}

async function restartUnderLoad(t: Running): Promise<void> {
  const api = apiClient(t.publicUrl, await adminToken());
  const readyAll = (): Promise<Array<number | null>> => Promise.all(t.readyUrls.map(status));
  const explain = <T>(wait: () => Promise<T>): Promise<T> => explained(t.processes, wait);

  for (const [flow, pause] of Object.entries(FLOWS)) {
    expect((await api.putFlow('etl', flow, flowYaml(pause))).status).toBeLessThan(300);
  }
  const ids: string[] = [];
  for (const flow of Object.keys(FLOWS)) {
    for (let i = 0; i < RUNS_PER_FLOW; i += 1) ids.push(await api.run('etl', flow));
  }

  // Every first task is running and has printed part of its lines.
  await explain(() =>
    eventually(
      'every first task running and printing',
      async () => {
        for (const id of ids) {
          const run = (await api.execution(id)).taskRuns.find((r) => r.taskId === 'first');
          if (run?.state !== 'RUNNING') return false;
          if (!(await api.logs(run.id)).some((l) => l.line === 'line-5')) return false;
        }
        return true;
      },
      60_000,
      200,
    ),
  );
  expect(await readyAll()).toEqual(t.readyUrls.map(() => 200));

  // Two more, created just before the stop: their claim, spec, snapshot and start meet the outage.
  for (const flow of ['count-fast', 'count-slow']) ids.push(await api.run('etl', flow));
  await pg.stopPostgres(t.stopMode);
  const downSince = Date.now();
  const duringOutage: Array<Array<number | null>> = [];
  while (Date.now() - downSince < OUTAGE_MS) {
    duringOutage.push(await readyAll());
    await sleep(250);
  }
  await pg.startPostgres();

  // Each process kept answering, and said not-ready (503) while the database was down, never ready.
  t.readyUrls.forEach((url, i) => {
    const answers = duringOutage.map((round) => round[i]);
    expect({ url, answers }).toEqual({ url, answers: answers.map(() => 503) });
  });

  await explain(() =>
    eventually(
      'every process ready again',
      async () => (await readyAll()).every((s) => s === 200),
      30_000,
      200,
    ),
  );
  const finals = await explain(() => Promise.all(ids.map((id) => api.waitFor(id, ended, 90_000))));
  for (const [name, p] of Object.entries(t.processes))
    expect({ name, exit: p.proc.exitCode }).toEqual({ name, exit: null });

  const expected = Array.from({ length: LINES }, (_, i) => `line-${i + 1}`);
  for (const execution of finals) {
    expect({ id: execution.id, state: execution.state }).toEqual({ id: execution.id, state: 'SUCCEEDED' });
    // One attempt per task, ended once, successfully: nothing was lost, retried or finished twice.
    const tasks = execution.taskRuns.map((r) => [r.taskId, r.attempt, r.state, r.reason]);
    expect(tasks.sort()).toEqual([
      ['after', 1, 'SUCCEEDED', null],
      ['first', 1, 'SUCCEEDED', null],
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
  const endings = await withAdmin(t.databaseUrl, (c) =>
    c.query<{ task_run_id: string; n: string; unprocessed: string }>(
      `SELECT payload->>'taskRunId' AS task_run_id, count(*) AS n,
              count(*) FILTER (WHERE processed_at IS NULL) AS unprocessed
         FROM events WHERE kind = 'task_run.ended' GROUP BY 1`,
    ),
  );
  const runIds = finals.flatMap((e) => e.taskRuns.map((r) => r.id)).sort();
  expect(endings.rows.map((r) => r.task_run_id).sort()).toEqual(runIds);
  for (const row of endings.rows) {
    expect({ id: row.task_run_id, ended: Number(row.n), unprocessed: Number(row.unprocessed) }).toEqual({
      id: row.task_run_id,
      ended: 1,
      unprocessed: 0,
    });
  }
}

test('standalone: a PostgreSQL restart mid-run loses no task run and no log line', async () => {
  const databaseUrl = await createDatabase('standalone');
  const server = await startStandalone(databaseUrl, { ...TIMING, SLUICE_WORKER_SLOTS: '8' });
  try {
    await restartUnderLoad({
      databaseUrl,
      publicUrl: server.publicUrl,
      readyUrls: [`${server.internalUrl}/ready`],
      processes: { server },
      stopMode: 'fast',
    });
  } finally {
    await server.stop();
  }
}, 240_000);

test('distributed: server and jobs reconnect after PostgreSQL crashed and restarted', async () => {
  const databaseUrl = await createDatabase('distributed');
  const processes: Record<string, AppProcess> = {};
  try {
    const server = (processes.server = await startServer(databaseUrl, TIMING));
    const jobs = (processes.jobs = await startJobs(databaseUrl, TIMING));
    processes.executor = await startExecutor(server, 'pg-restart-executor', {
      DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS: '8',
    });
    await restartUnderLoad({
      databaseUrl,
      publicUrl: server.publicUrl,
      readyUrls: [`${server.internalUrl}/ready`, `${jobsInternalUrl(jobs)}/ready`],
      processes,
      stopMode: 'immediate',
    });
  } finally {
    for (const p of Object.values(processes).reverse()) await p.stop();
  }
}, 240_000);
