import { StaleFenceError } from '@sluice/protocol';
import {
  TaskRunNotFoundError,
  appendLogs,
  cancelQueuedTaskRuns,
  cancelRequestedAmong,
  claimTaskRuns,
  createPool,
  getTaskRun,
  heartbeatTaskRun,
  isStillRunning,
  markRunning,
  recordExternalRef,
  requestCancel,
  watchdogSweep,
} from '@sluice/store';
import { claimOne, completeTaskRun, queueOne, seedExecution, useStoreDatabase } from './fixtures';

describe('fenced writes', () => {
  const store = useStoreDatabase();
  let execution: string;
  beforeEach(async () => {
    await store.pool.query('DELETE FROM executions');
    execution = await seedExecution(store.pool);
  });

  const backdateHeartbeat = (id: string, seconds: number) =>
    store.pool.query(`UPDATE task_runs SET heartbeat_at = now() - $2 * interval '1 second' WHERE id = $1`, [
      id,
      seconds,
    ]);

  it('walks the holder through start, heartbeats and completion; a repeated completion is not applied again', async () => {
    await queueOne(store.pool, execution);
    const run = await claimOne(store.pool);
    const ref = { taskRunId: run.id, fence: run.fence };
    await recordExternalRef(store.pool, { ...ref, externalRef: 'pid:4242' });
    expect((await markRunning(store.pool, ref)).state).toBe('RUNNING');
    expect(await heartbeatTaskRun(store.pool, ref)).toEqual({ cancel: false });
    expect(await isStillRunning(store.pool, run.id)).toBe(true);

    const done = await completeTaskRun(store.pool, { ...ref, state: 'SUCCEEDED', exitCode: 0 });
    expect(done.applied).toBe(true);
    expect(done.row).toMatchObject({ state: 'SUCCEEDED', exitCode: 0, fence: 1 });
    expect(done.row.endedAt).toBeInstanceOf(Date);
    expect(await getTaskRun(store.pool, run.id)).toMatchObject({
      state: 'SUCCEEDED',
      externalRef: 'pid:4242',
    });

    const again = await completeTaskRun(store.pool, {
      ...ref,
      state: 'FAILED',
      reason: 'exit_code',
      exitCode: 1,
    });
    expect(again).toMatchObject({ applied: false, row: { state: 'SUCCEEDED', exitCode: 0 } });
    expect(await isStillRunning(store.pool, run.id)).toBe(false);
    await expect(heartbeatTaskRun(store.pool, ref)).rejects.toBeInstanceOf(StaleFenceError);
  });

  it('refuses heartbeat, start and completion with a stale fence and changes nothing', async () => {
    await queueOne(store.pool, execution);
    const run = await claimOne(store.pool);
    await markRunning(store.pool, { taskRunId: run.id, fence: run.fence });
    const before = await getTaskRun(store.pool, run.id);
    const stale = { taskRunId: run.id, fence: run.fence - 1 };

    await expect(heartbeatTaskRun(store.pool, stale)).rejects.toBeInstanceOf(StaleFenceError);
    await expect(markRunning(store.pool, stale)).rejects.toBeInstanceOf(StaleFenceError);
    await expect(recordExternalRef(store.pool, { ...stale, externalRef: 'zombie' })).rejects.toBeInstanceOf(
      StaleFenceError,
    );
    await expect(completeTaskRun(store.pool, { ...stale, state: 'FAILED' })).rejects.toBeInstanceOf(
      StaleFenceError,
    );
    await expect(
      appendLogs(store.pool, {
        ...stale,
        lines: [{ seq: 1, stream: 'stdout', line: 'x', ts: new Date().toISOString() }],
      }),
    ).rejects.toBeInstanceOf(StaleFenceError);
    expect(await getTaskRun(store.pool, run.id)).toEqual(before);
  });

  it('answers an unknown or malformed task run id with TaskRunNotFoundError', async () => {
    const missing = { taskRunId: '00000000-0000-4000-8000-000000000000', fence: 1 };
    await expect(heartbeatTaskRun(store.pool, missing)).rejects.toBeInstanceOf(TaskRunNotFoundError);
    await expect(completeTaskRun(store.pool, { ...missing, state: 'SUCCEEDED' })).rejects.toBeInstanceOf(
      TaskRunNotFoundError,
    );
    await expect(heartbeatTaskRun(store.pool, { taskRunId: 'not-a-uuid', fence: 1 })).rejects.toBeInstanceOf(
      TaskRunNotFoundError,
    );
    expect(await isStillRunning(store.pool, 'not-a-uuid')).toBe(false);
  });

  it('watchdog fails a run whose heartbeats stopped as lost and fences off its old holder', async () => {
    await queueOne(store.pool, execution);
    await queueOne(store.pool, execution);
    const silent = await claimOne(store.pool, 'gone');
    const alive = await claimOne(store.pool, 'alive');
    await markRunning(store.pool, { taskRunId: silent.id, fence: silent.fence });
    await backdateHeartbeat(silent.id, 120);

    const failed = await watchdogSweep(store.pool, { heartbeatTimeoutMs: 30_000 });
    expect(failed.map((r) => r.id)).toEqual([silent.id]);
    expect(failed[0]).toMatchObject({ state: 'FAILED', reason: 'lost', fence: silent.fence + 1 });
    expect(failed[0]?.error).toMatch(/no heartbeat for 30 s from owner gone/);
    expect((await getTaskRun(store.pool, alive.id))?.state).toBe('STARTING');

    // The zombie comes back: nothing it sends lands.
    const zombie = { taskRunId: silent.id, fence: silent.fence };
    await expect(heartbeatTaskRun(store.pool, zombie)).rejects.toBeInstanceOf(StaleFenceError);
    await expect(completeTaskRun(store.pool, { ...zombie, state: 'SUCCEEDED' })).rejects.toBeInstanceOf(
      StaleFenceError,
    );
    expect(await getTaskRun(store.pool, silent.id)).toMatchObject({ state: 'FAILED', reason: 'lost' });
  });

  it('watchdog fails a RUNNING task run past its timeout with reason timeout', async () => {
    await queueOne(store.pool, execution);
    const run = await claimOne(store.pool);
    await markRunning(store.pool, { taskRunId: run.id, fence: run.fence });
    await store.pool.query(`UPDATE task_runs SET started_at = now() - interval '2 minutes' WHERE id = $1`, [
      run.id,
    ]);

    // timeout 60 s + grace 10 s < 2 minutes, while heartbeats are fresh.
    const failed = await watchdogSweep(store.pool, { heartbeatTimeoutMs: 30_000, timeoutGraceMs: 10_000 });
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ id: run.id, state: 'FAILED', reason: 'timeout', fence: run.fence + 1 });
  });

  it('two concurrent sweeps never fail one task run twice', async () => {
    for (let i = 0; i < 40; i++) await queueOne(store.pool, execution);
    await claimTaskRuns(store.pool, {
      ownerId: 'gone',
      executorTypes: ['process'],
      pools: ['default'],
      limit: 40,
    });
    await store.pool.query(`UPDATE task_runs SET heartbeat_at = now() - interval '5 minutes'`);

    const sweepers = [createPool(store.url, { max: 1 }), createPool(store.url, { max: 1 })];
    try {
      const results = await Promise.all(
        sweepers.map(async (p) => {
          const mine = [];
          for (
            let batch;
            (batch = await watchdogSweep(p, { heartbeatTimeoutMs: 30_000, limit: 3 })).length > 0;
          ) {
            mine.push(...batch);
          }
          return mine;
        }),
      );
      const all = results.flat();
      expect(all).toHaveLength(40);
      expect(new Set(all.map((r) => r.id)).size).toBe(40);
      // Each failure bumped the fence exactly once (claim 1 → 2).
      const { rows } = await store.pool.query(`SELECT DISTINCT fence, state FROM task_runs`);
      expect(rows).toEqual([{ fence: 2, state: 'FAILED' }]);
    } finally {
      await Promise.all(sweepers.map((p) => p.end()));
    }
  });

  it('cancels queued task runs at once and flags active ones for their holders', async () => {
    const queued = await queueOne(store.pool, execution);
    await queueOne(store.pool, execution, { executorType: 'docker' });
    const [active] = await claimTaskRuns(store.pool, {
      ownerId: 'a',
      executorTypes: ['docker'],
      pools: ['default'],
      limit: 1,
    });
    const ref = { taskRunId: active!.id, fence: active!.fence };

    const cancelled = await cancelQueuedTaskRuns(store.pool, execution);
    expect(cancelled.map((r) => r.id)).toEqual([queued.id]);
    expect(cancelled[0]).toMatchObject({ state: 'CANCELLED', reason: 'cancelled', fence: 1 });

    expect(await cancelRequestedAmong(store.pool, [active!.id, queued.id])).toEqual([]);
    expect(await requestCancel(store.pool, execution)).toEqual([active!.id]);
    expect(await cancelRequestedAmong(store.pool, [active!.id, queued.id, 'junk'])).toEqual([active!.id]);
    expect(await heartbeatTaskRun(store.pool, ref)).toEqual({ cancel: true });
    const done = await completeTaskRun(store.pool, { ...ref, state: 'CANCELLED', reason: 'cancelled' });
    expect(done).toMatchObject({ applied: true, row: { state: 'CANCELLED' } });
    expect(await cancelRequestedAmong(store.pool, [active!.id])).toEqual([]);
  });
});
