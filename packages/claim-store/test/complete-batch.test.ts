import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { StaleFenceError } from '@sluice/protocol';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import {
  TaskRunNotFoundError,
  completeTaskRuns,
  createPool,
  getTaskRun,
  heartbeatTaskRun,
  type CompleteResult,
} from '@sluice/claim-store';
import { claimOne, queueOne, seedExecution } from './fixtures';

const value = (r: PromiseSettledResult<CompleteResult> | undefined) => {
  if (r?.status !== 'fulfilled') throw new Error(`expected a fulfilled completion, got ${JSON.stringify(r)}`);
  return r.value;
};

describe('completeTaskRuns', () => {
  let db: TestDatabase;
  let pool: Pool;
  let execution: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createPool(db.url);
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });
  beforeEach(async () => {
    await pool.query('DELETE FROM executions');
    execution = await seedExecution(pool);
  });

  it('ends several held task runs in one call, each with its own state, in request order', async () => {
    for (let i = 0; i < 3; i++) await queueOne(pool, execution);
    const [a, b, c] = [await claimOne(pool), await claimOne(pool), await claimOne(pool)];
    const results = await completeTaskRuns(pool, [
      { taskRunId: c.id, fence: c.fence, state: 'FAILED', reason: 'exit_code', exitCode: 2, error: 'boom' },
      { taskRunId: a.id, fence: a.fence, state: 'SUCCEEDED', exitCode: 0 },
      { taskRunId: b.id, fence: b.fence, state: 'CANCELLED' },
    ]);
    expect(results.map((r) => value(r).row.id)).toEqual([c.id, a.id, b.id]);
    expect(value(results[0])).toMatchObject({
      applied: true,
      row: { state: 'FAILED', reason: 'exit_code', exitCode: 2, error: 'boom' },
    });
    expect(await getTaskRun(pool, a.id)).toMatchObject({ state: 'SUCCEEDED', exitCode: 0 });
    expect((await getTaskRun(pool, b.id))?.state).toBe('CANCELLED');
    await expect(heartbeatTaskRun(pool, { taskRunId: a.id, fence: a.fence })).rejects.toBeInstanceOf(
      StaleFenceError,
    );
  });

  it('writes the valid requests and reports each refused one as completeTaskRun would', async () => {
    await queueOne(pool, execution);
    await queueOne(pool, execution);
    const held = await claimOne(pool);
    const done = await claimOne(pool);
    value((await completeTaskRuns(pool, [{ taskRunId: done.id, fence: done.fence, state: 'SUCCEEDED' }]))[0]);
    const missing = randomUUID();

    const [ok, repeat, stale, unknown, malformed] = await completeTaskRuns(pool, [
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
    expect((await getTaskRun(pool, done.id))?.state).toBe('SUCCEEDED');
  });
});
