import { Client } from 'pg';
import {
  MAX_DUE_TIMES_PER_FLOW,
  runSchedulerCycle,
  SCHEDULER_ADVISORY_LOCK_KEY,
  startScheduler,
  type SchedulerCycleResult,
} from '../src/scheduler';
import { recordingLogger, silentLogger, sleep } from '@sluice/testing';
import { startJobsHarness, type JobsHarness } from './helpers';

const EVERY_SECOND = '* * * * * *';
const secondsApart = (times: Date[]) => times.slice(1).map((t, i) => t.getTime() - times[i]!.getTime());

describe('scheduler', () => {
  let h: JobsHarness;
  beforeAll(async () => {
    h = await startJobsHarness();
  });
  afterAll(() => h.close());
  // Each test uses its own flows; clearing executions keeps the capacity count to that test's task runs.
  afterEach(async () => {
    await h.pool.query('DELETE FROM executions');
    await h.pool.query('DELETE FROM flows');
  });

  const cycle = (options: { now?: Date; maxConcurrentJobs?: number; log?: typeof silentLogger } = {}) =>
    runSchedulerCycle({
      store: h.store,
      engine: h.engine,
      maxConcurrentJobs: options.maxConcurrentJobs ?? 0,
      log: options.log ?? silentLogger,
      now: options.now,
    });

  it('creates one execution per due time while three replicas run cycles at once', async () => {
    const start = await h.dbSecond();
    await h.storeFlow('every-second', EVERY_SECOND, { updatedAt: new Date(start.getTime() + 200) });
    const results: SchedulerCycleResult[] = [];
    const replica = async () => {
      const until = Date.now() + 3000;
      while (Date.now() < until) {
        results.push(await cycle());
        await sleep(40);
      }
    };
    await Promise.all([replica(), replica(), replica()]);
    const end = await h.dbSecond();
    results.push(await cycle({ now: end }));

    const times = await h.scheduledFor('every-second');
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(times[0]).toEqual(new Date(start.getTime() + 1000));
    expect(times.at(-1)).toEqual(end);
    expect(secondsApart(times).every((gap) => gap === 1000)).toBe(true);
    // Cycles never overlapped: none found a due time already taken by another.
    expect(results.reduce((n, r) => n + r.alreadyExisted, 0)).toBe(0);
    expect(results.reduce((n, r) => n + r.created, 0)).toBe(times.length);
  });

  it('skips the cycle while another replica holds the lock', async () => {
    const now = await h.dbSecond();
    await h.storeFlow('locked-out', EVERY_SECOND, { updatedAt: new Date(now.getTime() - 5000) });
    const other = new Client({ connectionString: h.db.url });
    await other.connect();
    try {
      await other.query('SELECT pg_advisory_lock($1)', [SCHEDULER_ADVISORY_LOCK_KEY]);
      expect(await cycle({ now })).toEqual({
        ran: false,
        created: 0,
        alreadyExisted: 0,
        skippedForCapacity: 0,
        failed: 0,
      });
      expect(await h.scheduledFor('locked-out')).toHaveLength(0);
      await other.query('SELECT pg_advisory_unlock($1)', [SCHEDULER_ADVISORY_LOCK_KEY]);
      expect(await cycle({ now })).toMatchObject({ ran: true, created: 5 });
    } finally {
      await other.end();
    }
  });

  it('stops creating at PIPELINE_MAX_CONCURRENT_JOBS active task runs and resumes where it stopped', async () => {
    const now = await h.dbSecond();
    await h.storeFlow('gated', EVERY_SECOND, { updatedAt: new Date(now.getTime() - 10_500) });
    const first = await cycle({ now, maxConcurrentJobs: 3 });
    expect(first).toMatchObject({ ran: true, created: 3, skippedForCapacity: 8 });
    const created = await h.scheduledFor('gated');
    expect(created).toEqual([10, 9, 8].map((s) => new Date(now.getTime() - s * 1000)));

    // Nothing more while the three task runs are still queued.
    expect(await cycle({ now, maxConcurrentJobs: 3 })).toMatchObject({ created: 0, skippedForCapacity: 8 });

    await h.pool.query(`UPDATE task_runs SET state = 'SUCCEEDED', ended_at = now()`);
    expect(await cycle({ now, maxConcurrentJobs: 3 })).toMatchObject({ created: 3, skippedForCapacity: 5 });
    const resumed = await h.scheduledFor('gated');
    expect(resumed).toHaveLength(6);
    expect(secondsApart(resumed).every((gap) => gap === 1000)).toBe(true);
  });

  it('catches up after an outage in bounded steps, oldest due times first', async () => {
    const second = await h.dbSecond();
    const now = new Date(second.getTime() - (second.getTime() % 60_000)); // on a minute mark
    const savedAt = new Date(now.getTime() - 3 * 3600_000); // every minute for 3 hours: 180 due
    await h.storeFlow('hourly-outage', '* * * * *', { updatedAt: savedAt });
    expect(await cycle({ now })).toMatchObject({ created: MAX_DUE_TIMES_PER_FLOW });
    const firstStep = await h.scheduledFor('hourly-outage');
    expect(firstStep[0]).toEqual(new Date(savedAt.getTime() + 60_000));
    expect(secondsApart(firstStep).every((gap) => gap === 60_000)).toBe(true);

    expect(await cycle({ now })).toMatchObject({ created: 180 - MAX_DUE_TIMES_PER_FLOW });
    const all = await h.scheduledFor('hourly-outage');
    expect(all).toHaveLength(180);
    expect(all.at(-1)).toEqual(now);
  });

  it('ignores flows without a schedule and survives an unusable one', async () => {
    const now = await h.dbSecond();
    const before = new Date(now.getTime() - 3000);
    await h.storeFlow('manual', null, { updatedAt: before });
    await h.storeFlow('scheduled', EVERY_SECOND, { updatedAt: before });
    await h.storeFlow('broken', EVERY_SECOND, { updatedAt: before });
    await h.pool.query(`UPDATE flows SET schedule = 'every tuesday' WHERE flow_id = 'broken'`);
    const log = recordingLogger();

    expect(await cycle({ now, log })).toMatchObject({ ran: true, created: 3, failed: 0 });
    const r = await h.pool.query<{ flow_id: string }>('SELECT DISTINCT flow_id FROM executions');
    expect(r.rows.map((row) => row.flow_id)).toEqual(['scheduled']);
    expect(log.lines).toContainEqual({ level: 'warn', message: 'flow schedule skipped' });
  });

  it("starts each scheduled execution in its flow's own workspace; same-name flows of two workspaces each get theirs", async () => {
    const now = await h.dbSecond();
    const before = new Date(now.getTime() - 2000);
    await h.storeFlow('nightly', EVERY_SECOND, { updatedAt: before, workspace: 'ws-a' });
    await h.storeFlow('nightly', EVERY_SECOND, { updatedAt: before, workspace: 'ws-b' });

    expect(await cycle({ now })).toMatchObject({ ran: true, created: 4, alreadyExisted: 0, failed: 0 });
    const r = await h.pool.query<{ workspace: string; n: number }>(
      `SELECT workspace, count(*)::int AS n FROM executions WHERE flow_id = 'nightly' GROUP BY 1 ORDER BY 1`,
    );
    expect(r.rows).toEqual([
      { workspace: 'ws-a', n: 2 },
      { workspace: 'ws-b', n: 2 },
    ]);
    // The next cycle owes neither anything: each workspace's due times are its own.
    expect(await cycle({ now })).toMatchObject({ created: 0, alreadyExisted: 0 });
  });

  it("starts a scheduled execution with the defaults of the flow's inputs (docs/flow-file.md#inputs)", async () => {
    const now = await h.dbSecond();
    await h.storeFlow('with-inputs', EVERY_SECOND, {
      updatedAt: new Date(now.getTime() - 1000),
      yamlLines: ['inputs:', '  day: { type: string, default: today }', '  n: { type: number }'],
    });
    expect(await cycle({ now })).toMatchObject({ created: 1, failed: 0 });
    const { rows } = await h.pool.query<{ inputs: unknown }>(
      "SELECT inputs FROM executions WHERE flow_id = 'with-inputs'",
    );
    expect(rows.map((r) => r.inputs)).toEqual([{ day: 'today' }]);
  });

  it('runs cycles on an interval until stopped', async () => {
    const now = await h.dbSecond();
    await h.storeFlow('interval', EVERY_SECOND, { updatedAt: new Date(now.getTime() - 2000) });
    const cycles: SchedulerCycleResult[] = [];
    const stop = startScheduler({
      store: h.store,
      engine: h.engine,
      maxConcurrentJobs: 0,
      log: silentLogger,
      intervalMs: 50,
      onCycle: (r) => cycles.push(r),
    });
    while ((await h.scheduledFor('interval')).length < 2) await sleep(20);
    await stop();
    const seen = cycles.length;
    await sleep(150);
    expect(cycles.length).toBe(seen);
  });
});
