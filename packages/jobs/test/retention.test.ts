import { randomUUID } from 'node:crypto';
import { runRetention, startRetention, type RetentionResult } from '../src/retention';
import { silentLogger, sleep } from '@sluice/testing';
import { startJobsHarness, type JobsHarness } from './helpers';

const DAY = 24 * 3600_000;
const RETENTION = 30 * DAY;

interface Seeded {
  executionId: string;
  taskRunId: string;
}

describe('retention', () => {
  let h: JobsHarness;
  beforeAll(async () => {
    h = await startJobsHarness();
  });
  afterAll(() => h.close());
  afterEach(async () => {
    await h.pool.query('DELETE FROM executions');
    await h.pool.query('DELETE FROM events');
    await h.pool.query('DELETE FROM executor_claims');
  });

  /** An execution with one task run carrying `logs` log lines, two outputs, two metrics and an artifact. */
  async function seed(options: {
    state: 'SUCCEEDED' | 'FAILED' | 'RUNNING';
    endedDaysAgo: number | null;
    taskState?: string;
    parentTaskRunId?: string;
    logs?: number;
  }): Promise<Seeded> {
    const executionId = randomUUID();
    const taskRunId = randomUUID();
    const ended = options.endedDaysAgo === null ? null : new Date(Date.now() - options.endedDaysAgo * DAY);
    await h.pool.query(
      `INSERT INTO executions (id, workspace, namespace, flow_id, definition, state, started_at, ended_at,
                               parent_task_run_id)
       VALUES ($1, 'w', 'ns', 'f', '{}', $2, now() - interval '60 days', $3, $4)`,
      [executionId, options.state, ended, options.parentTaskRunId ?? null],
    );
    await h.pool.query(
      `INSERT INTO task_runs (id, execution_id, task_id, attempt, max_attempts, state, executor_type, pool,
                              executor, spec, timeout_ms, ended_at)
       VALUES ($1, $2, 't', 1, 1, $3, 'process', 'default', '{}', '{}', 60000, $4)`,
      [
        taskRunId,
        executionId,
        options.taskState ?? (options.state === 'RUNNING' ? 'RUNNING' : options.state),
        ended,
      ],
    );
    await h.pool.query(
      `INSERT INTO task_run_logs (task_run_id, seq, stream, line, ts)
       SELECT $1, s, 'stdout', 'line ' || s, now() FROM generate_series(1, $2) s`,
      [taskRunId, options.logs ?? 10],
    );
    await h.pool.query(`INSERT INTO task_run_outputs VALUES ($1, 'rows', '42'), ($1, 'status', 'ok')`, [
      taskRunId,
    ]);
    await h.pool.query(
      `INSERT INTO task_run_metrics (task_run_id, name, value) VALUES ($1, 'm', 1), ($1, 'm', 2)`,
      [taskRunId],
    );
    await h.pool.query(
      `INSERT INTO artifacts (task_run_id, name, size, content) VALUES ($1, 'report', 2, 'hi')`,
      [taskRunId],
    );
    return { executionId, taskRunId };
  }

  async function dataOf(taskRunId: string) {
    const count = async (table: string) =>
      (
        await h.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE task_run_id = $1`, [
          taskRunId,
        ])
      ).rows[0]!.n;
    return {
      logs: await count('task_run_logs'),
      outputs: await count('task_run_outputs'),
      metrics: await count('task_run_metrics'),
      artifacts: await count('artifacts'),
    };
  }
  const untouched = { logs: 10, outputs: 2, metrics: 2, artifacts: 1 };
  const gone = { logs: 0, outputs: 0, metrics: 0, artifacts: 0 };

  it("deletes old ended executions' data in batches and keeps recent and running ones", async () => {
    const old = await seed({ state: 'SUCCEEDED', endedDaysAgo: 40 });
    const oldFailed = await seed({ state: 'FAILED', endedDaysAgo: 31 });
    const recent = await seed({ state: 'SUCCEEDED', endedDaysAgo: 1 });
    const running = await seed({ state: 'RUNNING', endedDaysAgo: null });

    // Batches of 3: 20 log lines need 7 statements, so only a loop over batches clears them.
    const result = await runRetention({ store: h.store, retentionMs: RETENTION, batchSize: 3 });
    expect(result).toEqual<RetentionResult>({
      logs: 20,
      outputs: 4,
      metrics: 4,
      artifacts: 2,
      events: 0,
      executorClaims: 0,
    });
    expect(await dataOf(old.taskRunId)).toEqual(gone);
    expect(await dataOf(oldFailed.taskRunId)).toEqual(gone);
    expect(await dataOf(recent.taskRunId)).toEqual(untouched);
    expect(await dataOf(running.taskRunId)).toEqual(untouched);
    // The history stays listable: execution and task run rows are kept.
    const rows = await h.pool.query('SELECT id FROM task_runs WHERE id = ANY($1)', [
      [old.taskRunId, oldFailed.taskRunId],
    ]);
    expect(rows.rowCount).toBe(2);
  });

  it('keeps an old child execution whose subflow parent still waits on it', async () => {
    const parent = await seed({ state: 'RUNNING', endedDaysAgo: null });
    const child = await seed({ state: 'SUCCEEDED', endedDaysAgo: 40, parentTaskRunId: parent.taskRunId });
    await runRetention({ store: h.store, retentionMs: RETENTION });
    expect(await dataOf(child.taskRunId)).toEqual(untouched);

    await h.pool.query(`UPDATE task_runs SET state = 'SUCCEEDED' WHERE id = $1`, [parent.taskRunId]);
    await runRetention({ store: h.store, retentionMs: RETENTION });
    expect(await dataOf(child.taskRunId)).toEqual(gone);
  });

  it('deletes processed events past retention and executor claims older than an hour', async () => {
    await h.pool.query(
      `INSERT INTO events (kind, payload, created_at, processed_at) VALUES
         ('task_run.ended', '{}', now() - interval '40 days', now() - interval '40 days'),
         ('task_run.ended', '{}', now() - interval '40 days', now() - interval '1 day'),
         ('task_run.ended', '{}', now() - interval '40 days', NULL)`,
    );
    await h.pool.query(
      `INSERT INTO executor_claims (instance_id, idempotency_key, task_run_ids, created_at) VALUES
         ('a', 'old', '{}', now() - interval '2 hours'), ('a', 'new', '{}', now() - interval '10 minutes')`,
    );
    expect(await runRetention({ store: h.store, retentionMs: RETENTION })).toMatchObject({
      events: 1,
      executorClaims: 1,
    });
    const events = await h.pool.query<{ processed: boolean }>(
      'SELECT processed_at IS NOT NULL AS processed FROM events ORDER BY id',
    );
    expect(events.rows).toEqual([{ processed: true }, { processed: false }]);
    const claims = await h.pool.query('SELECT idempotency_key FROM executor_claims');
    expect(claims.rows).toEqual([{ idempotency_key: 'new' }]);
  });

  it('keeps execution data and events forever with SLUICE_RETENTION=0 but still cleans claim records', async () => {
    const ancient = await seed({ state: 'SUCCEEDED', endedDaysAgo: 400 });
    await h.pool.query(
      `INSERT INTO events (kind, payload, processed_at) VALUES ('x', '{}', now() - interval '400 days')`,
    );
    await h.pool.query(
      `INSERT INTO executor_claims (instance_id, idempotency_key, task_run_ids, created_at)
       VALUES ('a', 'old', '{}', now() - interval '2 hours')`,
    );
    expect(await runRetention({ store: h.store, retentionMs: 0 })).toEqual<RetentionResult>({
      logs: 0,
      outputs: 0,
      metrics: 0,
      artifacts: 0,
      events: 0,
      executorClaims: 1,
    });
    expect(await dataOf(ancient.taskRunId)).toEqual(untouched);
  });

  it('runs passes on an interval until stopped', async () => {
    const old = await seed({ state: 'SUCCEEDED', endedDaysAgo: 40 });
    const passes: RetentionResult[] = [];
    const stop = startRetention({
      store: h.store,
      retentionMs: RETENTION,
      intervalMs: 50,
      firstDelayMs: 0,
      log: silentLogger,
      onPass: (r) => passes.push(r),
    });
    while (passes.length < 2) await sleep(20);
    await stop();
    expect(passes[0]).toMatchObject({ logs: 10 });
    expect(await dataOf(old.taskRunId)).toEqual(gone);
  });
});
