import { claimTaskRuns, openStore, type ClaimedTaskRunRow, type Store } from '@sluice/store';
import type { SchedulingSettings } from '@sluice/config';
import { DEFAULT_ENGINE_SETTINGS, Engine } from '@sluice/engine';
import { createMetrics } from '@sluice/observability';
import { startBackgroundJobs, type BackgroundJobs } from '../src/background';
import { eventually, silentLogger } from '@sluice/testing';
import { startJobsHarness, WORKSPACE, type JobsHarness } from './helpers';

const scheduling: SchedulingSettings = {
  schedulerInterval: 100,
  maxConcurrentJobs: 0,
  watchdogInterval: 100,
  heartbeatTimeout: 400,
  defaultMaxAttempts: 1,
  executorSilenceTimeout: 60_000,
  retention: 30 * 24 * 3600_000,
};

describe('background jobs', () => {
  let h: JobsHarness;
  let jobsStore: Store;
  let jobs: BackgroundJobs;
  const metrics = createMetrics();

  beforeAll(async () => {
    h = await startJobsHarness();
    // The jobs service's own pool and engine: it learns of other processes' events only through NOTIFY or polling.
    jobsStore = openStore(h.db.url);
    const engine = new Engine({
      store: jobsStore,
      settings: { ...DEFAULT_ENGINE_SETTINGS, jwtSecret: '' },
      log: silentLogger,
    });
    jobs = await startBackgroundJobs({
      store: jobsStore,
      engine,
      scheduling,
      log: silentLogger,
      metrics,
      // Far longer than any wait below: events must arrive through the NOTIFY relay.
      eventPollIntervalMs: 60_000,
      listenRetryMs: 100,
      queueDepthIntervalMs: 50,
    });
  });
  afterAll(async () => {
    await jobs.stop();
    await jobsStore.close();
    await h.close();
  });

  const executionState = async (id: string) =>
    (await h.pool.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [id])).rows[0]
      ?.state;

  /** What a server does for a user: create an execution, then its runner claims and finishes the task run. */
  async function runManually(flowId: string): Promise<string> {
    await h.storeFlow(flowId, null, { pool: flowId });
    const execution = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId });
    const [run] = await claimTaskRuns(h.pool, {
      ownerId: 'test',
      executorTypes: ['process'],
      pools: [flowId],
      limit: 1,
    });
    await h.engine.finishTaskRun({ taskRunId: run!.id, fence: run!.fence, state: 'SUCCEEDED', exitCode: 0 });
    return execution.id;
  }

  it('schedules due executions and counts their queued task runs', async () => {
    await h.storeFlow('ticker', '* * * * * *');
    await eventually('a scheduled execution', async () => (await h.scheduledFor('ticker')).length > 0);
    await eventually('the queue depth gauge', async () => {
      const text = await metrics.registry.metrics();
      return /sluice_queue_depth\{pool="default",executor_type="process"\} [1-9]/.test(text);
    });
    await h.pool.query(`UPDATE flows SET schedule = NULL WHERE flow_id = 'ticker'`);
  });

  it('consumes an event another process wrote, woken by NOTIFY', async () => {
    const executionId = await runManually('manual-1');
    expect(
      await eventually(
        'the execution to succeed',
        async () => (await executionState(executionId)) === 'SUCCEEDED',
      ),
    ).toBe(true);
  });

  it('fails a task run nobody heartbeats as lost, and the consumer ends its execution', async () => {
    await h.storeFlow('abandoned', null, { pool: 'abandoned' });
    const execution = await h.engine.createExecution({
      workspace: WORKSPACE,
      namespace: 'ns',
      flowId: 'abandoned',
    });
    const claimed: ClaimedTaskRunRow[] = await claimTaskRuns(h.pool, {
      ownerId: 'gone',
      executorTypes: ['process'],
      pools: ['abandoned'],
      limit: 1,
    });
    expect(claimed).toHaveLength(1);
    await eventually('the execution to fail', async () => (await executionState(execution.id)) === 'FAILED');
    const run = await h.pool.query<{ state: string; reason: string }>(
      'SELECT state, reason FROM task_runs WHERE id = $1',
      [claimed[0]!.id],
    );
    expect(run.rows[0]).toEqual({ state: 'FAILED', reason: 'lost' });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/sluice_watchdog_failures_total\{reason="lost"\} [1-9]/);
  });

  it('re-opens a lost LISTEN connection and keeps relaying', async () => {
    const killed = await h.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`,
    );
    expect(killed.rowCount).toBe(1);
    await eventually('the LISTEN connection to come back', async () => {
      const r = await h.pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
      );
      return r.rowCount === 1;
    });
    const executionId = await runManually('manual-2');
    await eventually(
      'the execution to succeed',
      async () => (await executionState(executionId)) === 'SUCCEEDED',
    );
  });
});
