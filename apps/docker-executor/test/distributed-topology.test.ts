import { Client } from 'pg';
import {
  createTestDatabase,
  ended,
  explained,
  startExecutor,
  startJobs,
  startServer,
  userApi,
  type AppProcess,
  type ServerProcess,
  type TestDatabase,
} from '@sluice/testing';

/**
 * Distributed mode end to end, every part a real process on one real
 * PostgreSQL: two `sluice server` replicas, one `sluice jobs`, and two
 * executor instances (`sluice docker-executor` with the process executor),
 * each instance talking to a different server replica.
 */

// Generous for a loaded 2-core CI machine: runners heartbeat every third of it.
const HEARTBEAT_TIMEOUT_MS = 9000;
const WATCHDOG_INTERVAL_MS = 1000;

let db: TestDatabase;
let pg: Client;
let servers: ServerProcess[] = [];
let jobs: AppProcess;
const executors: Record<string, AppProcess> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  pg = new Client({ connectionString: db.url });
  await pg.connect();
  // The servers tell runners how often to heartbeat: inside the same timeout the watchdog uses.
  const heartbeat = { PIPELINE_HEARTBEAT_TIMEOUT: `${HEARTBEAT_TIMEOUT_MS}ms` };
  servers = [await startServer(db.url, heartbeat), await startServer(db.url, heartbeat)];
  jobs = await startJobs(db.url, {
    PIPELINE_JOB_SCHEDULER_INTERVAL: '200ms',
    PIPELINE_JOB_WATCHDOG_INTERVAL: `${WATCHDOG_INTERVAL_MS}ms`,
    PIPELINE_HEARTBEAT_TIMEOUT: `${HEARTBEAT_TIMEOUT_MS}ms`,
  });
  const slots = { DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS: '4' };
  executors.alpha = await startExecutor(servers[0]!, 'alpha', slots);
  executors.beta = await startExecutor(servers[1]!, 'beta', slots);
}, 90_000);

afterAll(async () => {
  await Promise.all(Object.values(executors).map((e) => e.stop()));
  await jobs?.stop();
  await Promise.all(servers.map((s) => s.stop()));
  await pg?.end();
  await db?.drop();
});

const everything = () => ({ ...executors, jobs, server1: servers[0]!, server2: servers[1]! });

describe('distributed topology', () => {
  it('spreads 200 task runs over both instances and advances the execution to SUCCEEDED', async () => {
    const api = await userApi(servers[0]!, 'admin');
    const tasks = Array.from(
      { length: 200 },
      (_, i) => `  - id: t${i}\n    type: command\n    command: ["true"]\n`,
    );
    expect((await api.putFlow('dist', 'wide', `tasks:\n${tasks.join('')}`)).status).toBe(200);
    const id = await api.run('dist', 'wide');
    // The second replica sees the same state: servers are stateless.
    const other = await userApi(servers[1]!, 'member');
    const done = await explained(everything(), () => other.waitFor(id, ended, 150_000));
    expect(done.state).toBe('SUCCEEDED');
    expect(new Set(done.taskRuns.map((r) => r.taskId)).size).toBe(200);
    expect(done.taskRuns.filter((r) => r.state === 'SUCCEEDED')).toHaveLength(200);
    const byOwner = new Map<string, number>();
    for (const run of done.taskRuns)
      byOwner.set(run.ownerId ?? '?', (byOwner.get(run.ownerId ?? '?') ?? 0) + 1);
    expect([...byOwner.keys()].sort()).toEqual(['alpha', 'beta']);
    expect(Math.min(...byOwner.values())).toBeGreaterThanOrEqual(20);
  }, 180_000);

  it('fires a scheduled flow exactly once per due time', async () => {
    const api = await userApi(servers[1]!, 'admin');
    const flow =
      'schedule: "* * * * * *"\ntasks:\n  - id: tick\n    type: http\n    request: { url: "' +
      servers[0]!.internalUrl +
      '/live" }\n';
    expect((await api.putFlow('dist', 'ticker', flow)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 4500));
    // Stop the schedule: the flow without it.
    expect((await api.putFlow('dist', 'ticker', flow.split('\n').slice(1).join('\n'))).status).toBe(200);
    const { rows } = await pg.query<{ due: Date; n: number }>(
      `SELECT scheduled_for AS due, count(*)::int AS n FROM executions
       WHERE flow_id = 'ticker' AND trigger = 'schedule' GROUP BY scheduled_for ORDER BY scheduled_for`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows.filter((r) => r.n !== 1)).toEqual([]);
    const seconds = rows.map((r) => r.due.getTime() / 1000);
    for (let i = 1; i < seconds.length; i += 1) expect(seconds[i]! - seconds[i - 1]!).toBe(1);
  }, 30_000);

  it('kill -9 of an instance: its task runs fail lost within heartbeat timeout + watchdog interval, and their retries finish on the other', async () => {
    const api = await userApi(servers[0]!, 'admin');
    const tasks = Array.from(
      { length: 8 },
      (_, i) =>
        `  - id: s${i}\n    type: command\n    command: ["sh", "-c", "[ \\"$SLUICE_ATTEMPT\\" = 1 ] && exec sleep 30; echo retried"]\n`,
    );
    const flow = `retry: { max_attempts: 2, backoff: 500ms }\ntasks:\n${tasks.join('')}`;
    expect((await api.putFlow('dist', 'sleepy', flow)).status).toBe(200);
    const id = await api.run('dist', 'sleepy');
    await explained(everything(), () =>
      api.waitFor(
        id,
        (e) => e.taskRuns.filter((r) => r.state === 'RUNNING' && r.ownerId === 'alpha').length >= 2,
        60_000,
      ),
    );
    const killedAt = Date.now();
    await executors.alpha!.stop('SIGKILL');
    delete executors.alpha;

    const done = await explained(everything(), () => api.waitFor(id, ended, 90_000));
    expect(done.state).toBe('SUCCEEDED');
    const lost = await pg.query<{ task_id: string; ended_at: Date }>(
      `SELECT task_id, ended_at FROM task_runs WHERE execution_id = $1 AND owner_id = 'alpha' AND attempt = 1`,
      [id],
    );
    expect(lost.rows.length).toBeGreaterThanOrEqual(2);
    // Only the killed instance's work was lost: beta's runners kept heartbeating through it.
    const elsewhere = await pg.query(
      `SELECT id FROM task_runs WHERE reason = 'lost' AND owner_id <> 'alpha'`,
    );
    expect(elsewhere.rows).toEqual([]);
    for (const row of lost.rows) {
      const run = done.taskRuns.find((r) => r.taskId === row.task_id && r.attempt === 1)!;
      expect(run).toMatchObject({ state: 'FAILED', reason: 'lost' });
      // Lost within heartbeat timeout + watchdog interval (plus the last heartbeat's age and some slack).
      expect(row.ended_at.getTime() - killedAt).toBeLessThan(
        HEARTBEAT_TIMEOUT_MS + WATCHDOG_INTERVAL_MS + 3000,
      );
      const retry = done.taskRuns.find((r) => r.taskId === row.task_id && r.attempt === 2);
      expect(retry).toMatchObject({ state: 'SUCCEEDED', ownerId: 'beta' });
    }
  }, 150_000);
});
