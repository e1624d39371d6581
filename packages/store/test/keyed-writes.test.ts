// Statements that find their task run by key must read that row, not every
// active (or queued) run: with statistics taken while nothing ran, the planner
// used to serve `id = $1 AND state IN ('STARTING', 'RUNNING')` from the partial
// index of active runs and filter by id — every heartbeat and completion then
// read all running task runs. idx_tup_fetch of the transaction counts the rows
// index scans fetched, so a keyed statement must fetch about one.
import type { Pool, PoolClient } from 'pg';
import {
  cancelQueuedTaskRuns,
  cancelRequestedAmong,
  claimTaskRuns,
  completeTaskRunWithEvent,
  heartbeatTaskRun,
  isStillRunning,
  markRunning,
  recordExternalRef,
  requestCancel,
  type ClaimedTaskRunRow,
} from '@sluice/store';
import { completeTaskRun, queueMany, queueOne, seedExecution, useStoreDatabase } from './fixtures';

const ACTIVE = 300;

/** Rows the index scans of `fn` fetched from task_runs, counted inside one transaction on `client`. */
async function rowsFetchedBy(client: PoolClient, fn: (c: PoolClient) => Promise<unknown>): Promise<number> {
  const read = async () =>
    Number(
      (
        await client.query<{ n: string }>(
          `SELECT coalesce(idx_tup_fetch, 0)::text AS n FROM pg_stat_xact_user_tables WHERE relname = 'task_runs'`,
        )
      ).rows[0]?.n ?? 0,
    );
  await client.query('BEGIN');
  try {
    const before = await read();
    await fn(client);
    return (await read()) - before;
  } finally {
    await client.query('COMMIT');
  }
}

describe('keyed writes with many active task runs and stale statistics', () => {
  const store = useStoreDatabase();
  let pool: Pool;
  let active: ClaimedTaskRunRow[];

  beforeAll(async () => {
    pool = store.pool;
    const busy = await seedExecution(pool);
    await queueMany(pool, busy, ACTIVE);
    // Statistics taken while nothing is active, as after a quiet night.
    await pool.query('VACUUM ANALYZE task_runs');
    active = await claimTaskRuns(pool, {
      ownerId: 'owner-a',
      executorTypes: ['process'],
      pools: ['default'],
      limit: ACTIVE,
    });
    expect(active).toHaveLength(ACTIVE);
  });

  /** Repeats `fn` so that prepared statements have switched to their generic plan, then counts one more call. */
  async function fetchedOnce(
    fn: (c: PoolClient, run: ClaimedTaskRunRow) => Promise<unknown>,
  ): Promise<number> {
    const runs = active.splice(0, 8);
    const last = runs[7];
    if (!last) throw new Error('ran out of active task runs');
    const client = await pool.connect(); // one connection: its prepared statements
    try {
      for (const run of runs.slice(0, 7)) await fn(client, run);
      return await rowsFetchedBy(client, (c) => fn(c, last));
    } finally {
      client.release();
    }
  }

  const ref = (run: ClaimedTaskRunRow) => ({ taskRunId: run.id, fence: run.fence });

  it.each<[string, (c: PoolClient, run: ClaimedTaskRunRow) => Promise<unknown>]>([
    ['heartbeat', (c, run) => heartbeatTaskRun(c, ref(run))],
    ['markRunning', (c, run) => markRunning(c, ref(run))],
    ['recordExternalRef', (c, run) => recordExternalRef(c, { ...ref(run), externalRef: 'pid-1' })],
    ['completeTaskRun', (c, run) => completeTaskRun(c, { ...ref(run), state: 'SUCCEEDED', exitCode: 0 })],
    [
      'completeTaskRunWithEvent',
      (c, run) =>
        completeTaskRunWithEvent(
          c,
          { ...ref(run), state: 'SUCCEEDED', exitCode: 0 },
          { kind: 'task_run.ended', channel: 'sluice_test_keyed' },
        ),
    ],
    ['isStillRunning', (c, run) => isStillRunning(c, run.id)],
    ['cancelRequestedAmong', (c, run) => cancelRequestedAmong(c, [run.id])],
  ])('%s reads its own task run, not every active one', async (_name, fn) => {
    expect(await fetchedOnce(fn)).toBeLessThanOrEqual(2);
  });

  it('requestCancel and cancelQueuedTaskRuns read the runs of their execution only', async () => {
    const small = await seedExecution(pool);
    const running = await queueOne(pool, small, { pool: 'small' });
    await claimTaskRuns(pool, { ownerId: 'owner-a', executorTypes: ['process'], pools: ['small'], limit: 1 });
    const waiting = await queueOne(pool, small, { pool: 'small' });
    await queueMany(pool, await seedExecution(pool), ACTIVE); // a long queue of another execution
    const client = await pool.connect();
    try {
      let flagged: string[] = [];
      let cancelled: string[] = [];
      expect(
        await rowsFetchedBy(client, async (c) => (flagged = await requestCancel(c, small))),
      ).toBeLessThanOrEqual(3);
      expect(
        await rowsFetchedBy(client, async (c) => {
          cancelled = (await cancelQueuedTaskRuns(c, small)).map((r) => r.id);
        }),
      ).toBeLessThanOrEqual(3);
      expect(flagged).toEqual([running.id]);
      expect(cancelled).toEqual([waiting.id]);
    } finally {
      client.release();
    }
  });
});
