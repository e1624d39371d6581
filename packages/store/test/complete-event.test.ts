import { Client, Pool } from 'pg';
import { StaleFenceError } from '@sluice/protocol';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { completeTaskRunWithEvent, createPool, getTaskRun } from '@sluice/store';
import { claimOne, queueOne, seedExecution } from './fixtures';

const EVENT = { kind: 'task_run.ended', channel: 'sluice_test_events' };

describe('completeTaskRunWithEvent', () => {
  let db: TestDatabase;
  let pool: Pool;
  let listener: Client;
  const notified: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createPool(db.url);
    listener = new Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (n) => notified.push(n.payload ?? ''));
    await listener.query(`LISTEN ${EVENT.channel}`);
  });
  afterAll(async () => {
    await listener.end();
    await pool.end();
    await db.drop();
  });

  async function eventsOf(taskRunId: string) {
    const { rows } = await pool.query<{ id: string; kind: string }>(
      `SELECT id::text AS id, kind FROM events WHERE payload->>'taskRunId' = $1 ORDER BY id`,
      [taskRunId],
    );
    return rows;
  }

  async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !check(); i += 1) await new Promise((r) => setTimeout(r, 10));
  }

  it('writes the completion and exactly one outbox event, and announces it', async () => {
    await queueOne(pool, await seedExecution(pool));
    const run = await claimOne(pool);
    const done = await completeTaskRunWithEvent(
      pool,
      { taskRunId: run.id, fence: run.fence, state: 'FAILED', reason: 'exit_code', exitCode: 3, error: 'x' },
      EVENT,
    );
    expect(done).toMatchObject({ applied: true, row: { state: 'FAILED', reason: 'exit_code', exitCode: 3 } });
    expect(await getTaskRun(pool, run.id)).toMatchObject({ state: 'FAILED', exitCode: 3, error: 'x' });
    const events = await eventsOf(run.id);
    expect(events).toEqual([{ id: expect.any(String), kind: 'task_run.ended' }]);
    await until(() => notified.includes(events[0]!.id));
    expect(notified).toContain(events[0]!.id);
  });

  it('records nothing for a repeat of the same completion or a stale fence', async () => {
    await queueOne(pool, await seedExecution(pool));
    const run = await claimOne(pool);
    const ref = { taskRunId: run.id, fence: run.fence };
    await completeTaskRunWithEvent(pool, { ...ref, state: 'SUCCEEDED', exitCode: 0 }, EVENT);

    const again = await completeTaskRunWithEvent(pool, { ...ref, state: 'SUCCEEDED', exitCode: 0 }, EVENT);
    expect(again).toMatchObject({ applied: false, row: { state: 'SUCCEEDED' } });
    await expect(
      completeTaskRunWithEvent(pool, { ...ref, fence: run.fence + 1, state: 'FAILED' }, EVENT),
    ).rejects.toBeInstanceOf(StaleFenceError);
    expect(await eventsOf(run.id)).toHaveLength(1);
  });
});
