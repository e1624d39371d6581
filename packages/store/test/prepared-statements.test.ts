import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { claimTaskRuns, createPool, withTransaction } from '@sluice/store';
import { completeTaskRun, queueMany, seedExecution } from './fixtures';

// The claim and completion go out as named statements unless the pool is made
// with preparedStatements: false (SLUICE_DATABASE_PREPARED_STATEMENTS=false,
// for transaction-mode poolers). pg_prepared_statements lists what the
// current session has prepared; one connection per pool makes it the same one.

describe('prepared statements', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  async function claimAndCompleteOnOneConnection(preparedStatements?: boolean) {
    const pool = createPool(db.url, { max: 1, preparedStatements });
    try {
      await queueMany(pool, await seedExecution(pool), 2);
      const claim = { ownerId: 'o', executorTypes: ['process' as const], pools: ['default'], limit: 1 };
      const [viaPool] = await claimTaskRuns(pool, claim);
      const [inTransaction] = await withTransaction(pool, (tx) => claimTaskRuns(tx, claim));
      for (const run of [viaPool, inTransaction]) {
        if (!run) throw new Error('expected a claimed task run');
        const done = await completeTaskRun(pool, {
          taskRunId: run.id,
          fence: run.fence,
          state: 'SUCCEEDED',
          exitCode: 0,
        });
        expect(done.applied).toBe(true);
      }
      const { rows } = await pool.query<{ name: string }>(
        'SELECT name FROM pg_prepared_statements ORDER BY name',
      );
      return rows.map((r) => r.name);
    } finally {
      await pool.end();
    }
  }

  it('prepares the claim and the completion once per connection by default', async () => {
    expect(await claimAndCompleteOnOneConnection()).toEqual([
      'sluice_claim_task_runs_1',
      'sluice_complete_task_run_with_event',
    ]);
  });

  it('plans a claim of the same limit once: from the sixth call on it runs the cached plan', async () => {
    const pool = createPool(db.url, { max: 1 });
    try {
      await queueMany(pool, await seedExecution(pool), 40);
      const claim = { ownerId: 'o', executorTypes: ['process' as const], pools: ['default'] };
      for (let i = 0; i < 10; i += 1) {
        expect(await claimTaskRuns(pool, { ...claim, limit: 2 })).toHaveLength(2);
      }
      expect(await claimTaskRuns(pool, { ...claim, limit: 3 })).toHaveLength(3);
      const { rows } = await pool.query<{ name: string; generic: number; custom: number }>(
        `SELECT name, generic_plans::int AS generic, custom_plans::int AS custom
         FROM pg_prepared_statements WHERE name LIKE 'sluice_claim%' ORDER BY name`,
      );
      expect(rows).toEqual([
        { name: 'sluice_claim_task_runs_2', generic: 5, custom: 5 },
        { name: 'sluice_claim_task_runs_3', generic: 0, custom: 1 },
      ]);
    } finally {
      await pool.end();
    }
  });

  it('sends them unnamed when preparedStatements is false, with the same results', async () => {
    expect(await claimAndCompleteOnOneConnection(false)).toEqual([]);
  });
});
