// Part of the main jest run (project `bench`): the store fixtures, real PostgreSQL.
/// <reference types="jest" />
import { randomUUID } from 'node:crypto';
import { StaleFenceError } from '@sluice/protocol';
import { TaskRunNotFoundError, getTaskRun, heartbeatTaskRun, type CompleteResult } from '@sluice/store';
import { claimOne, queueOne, seedExecution, useStoreDatabase } from '../../packages/store/test/fixtures';
import { completeTaskRuns } from './completions';

const value = (r: PromiseSettledResult<CompleteResult> | undefined) => {
  if (r?.status !== 'fulfilled') throw new Error(`expected a fulfilled completion, got ${JSON.stringify(r)}`);
  return r.value;
};

describe('completeTaskRuns', () => {
  const store = useStoreDatabase();
  let execution: string;
  beforeEach(async () => {
    await store.pool.query('DELETE FROM executions');
    execution = await seedExecution(store.pool);
  });

  it('ends several held task runs in one call, each with its own state, in request order', async () => {
    for (let i = 0; i < 3; i++) await queueOne(store.pool, execution);
    const [a, b, c] = [await claimOne(store.pool), await claimOne(store.pool), await claimOne(store.pool)];
    const results = await completeTaskRuns(store.pool, [
      { taskRunId: c.id, fence: c.fence, state: 'FAILED', reason: 'exit_code', exitCode: 2, error: 'boom' },
      { taskRunId: a.id, fence: a.fence, state: 'SUCCEEDED', exitCode: 0 },
      { taskRunId: b.id, fence: b.fence, state: 'CANCELLED' },
    ]);
    expect(results.map((r) => value(r).row.id)).toEqual([c.id, a.id, b.id]);
    expect(value(results[0])).toMatchObject({
      applied: true,
      row: { state: 'FAILED', reason: 'exit_code', exitCode: 2, error: 'boom' },
    });
    expect(await getTaskRun(store.pool, a.id)).toMatchObject({ state: 'SUCCEEDED', exitCode: 0 });
    expect((await getTaskRun(store.pool, b.id))?.state).toBe('CANCELLED');
    await expect(heartbeatTaskRun(store.pool, { taskRunId: a.id, fence: a.fence })).rejects.toBeInstanceOf(
      StaleFenceError,
    );
  });

  it('writes the valid requests and reports each refused one as completeTaskRun would', async () => {
    await queueOne(store.pool, execution);
    await queueOne(store.pool, execution);
    const held = await claimOne(store.pool);
    const done = await claimOne(store.pool);
    value(
      (
        await completeTaskRuns(store.pool, [{ taskRunId: done.id, fence: done.fence, state: 'SUCCEEDED' }])
      )[0],
    );
    const missing = randomUUID();

    const [ok, repeat, stale, unknown, malformed] = await completeTaskRuns(store.pool, [
      { taskRunId: held.id, fence: held.fence, state: 'SUCCEEDED' },
      { taskRunId: done.id, fence: done.fence, state: 'FAILED' },
      { taskRunId: held.id, fence: held.fence - 1, state: 'FAILED' },
      { taskRunId: missing, fence: 1, state: 'SUCCEEDED' },
      { taskRunId: 'not-a-uuid', fence: 1, state: 'SUCCEEDED' },
    ]);
    expect(value(ok)).toMatchObject({ applied: true, row: { state: 'SUCCEEDED' } });
    // The holder repeating its own completion changes nothing.
    expect(value(repeat)).toMatchObject({ applied: false, row: { state: 'SUCCEEDED' } });
    expect(stale).toMatchObject({ status: 'rejected', reason: expect.any(StaleFenceError) });
    expect(unknown).toMatchObject({ status: 'rejected', reason: expect.any(TaskRunNotFoundError) });
    expect(malformed).toMatchObject({ status: 'rejected', reason: expect.any(TaskRunNotFoundError) });
    expect((await getTaskRun(store.pool, done.id))?.state).toBe('SUCCEEDED');
  });
});
