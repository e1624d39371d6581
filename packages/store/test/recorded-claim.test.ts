import { claimTaskRunsRecorded, createPool, type ClaimOptions } from '@sluice/store';
import { queueMany, seedExecution, useStoreDatabase } from './fixtures';

const CLAIM: Omit<ClaimOptions, 'perPoolLimits'> = {
  ownerId: 'exec-1',
  executorTypes: ['process'],
  pools: ['default'],
  limit: 2,
};
const RECORD = { instanceId: 'exec-1', idempotencyKey: 'key-1' };

describe('claimTaskRunsRecorded', () => {
  const store = useStoreDatabase();
  beforeEach(async () => {
    await store.pool.query('DELETE FROM executions');
    await store.pool.query('DELETE FROM executor_claims');
  });

  const states = async () =>
    (
      await store.pool.query<{ state: string; fence: number; owner_id: string | null }>(
        'SELECT state, fence, owner_id FROM task_runs ORDER BY created_at',
      )
    ).rows;
  const recordOf = async (key: string) =>
    (
      await store.pool.query<{ task_run_ids: string[] }>(
        'SELECT task_run_ids FROM executor_claims WHERE instance_id = $1 AND idempotency_key = $2',
        ['exec-1', key],
      )
    ).rows[0]?.task_run_ids;

  it('claims and records the claimed task runs under the key, in claim order', async () => {
    await queueMany(store.pool, await seedExecution(store.pool), 3);
    const queued = (await store.pool.query<{ id: string }>('SELECT id FROM task_runs ORDER BY created_at'))
      .rows;
    const claimed = await claimTaskRunsRecorded(store.pool, CLAIM, RECORD);
    expect(claimed?.map((r) => r.id)).toEqual(queued.slice(0, 2).map((r) => r.id));
    expect(await recordOf('key-1')).toEqual(queued.slice(0, 2).map((r) => r.id));
    expect((await states()).map((r) => r.state)).toEqual(['STARTING', 'STARTING', 'QUEUED']);
  });

  it('with the key already recorded it answers null and its claim is undone', async () => {
    await queueMany(store.pool, await seedExecution(store.pool), 3);
    const first = await claimTaskRunsRecorded(store.pool, { ...CLAIM, limit: 1 }, RECORD);
    expect(first).toHaveLength(1);
    expect(await claimTaskRunsRecorded(store.pool, CLAIM, RECORD)).toBeNull();
    // The repeat's claim ran and was rolled back with the refused record: no fence moved.
    expect(await states()).toEqual([
      { state: 'STARTING', fence: 1, owner_id: 'exec-1' },
      { state: 'QUEUED', fence: 0, owner_id: null },
      { state: 'QUEUED', fence: 0, owner_id: null },
    ]);
    expect(await recordOf('key-1')).toEqual([first![0]!.id]);
    // Another key is another claim.
    expect(
      await claimTaskRunsRecorded(store.pool, CLAIM, { ...RECORD, idempotencyKey: 'key-2' }),
    ).toHaveLength(2);
  });

  it('a claim that found nothing records nothing, so the key may claim later', async () => {
    const execution = await seedExecution(store.pool);
    expect(await claimTaskRunsRecorded(store.pool, CLAIM, RECORD)).toEqual([]);
    expect(await recordOf('key-1')).toBeUndefined();
    await queueMany(store.pool, execution, 1);
    expect(await claimTaskRunsRecorded(store.pool, CLAIM, RECORD)).toHaveLength(1);
  });

  it.each([
    ['commits', null],
    ['rolls back', 2],
  ])(
    'a twin in flight with the key is waited for: when it %s the answer is %p claims',
    async (end, count) => {
      await queueMany(store.pool, await seedExecution(store.pool), 2);
      const twin = createPool(store.url, { max: 1 });
      const client = await twin.connect();
      try {
        await client.query('BEGIN');
        await client.query(
          `INSERT INTO executor_claims (instance_id, idempotency_key, task_run_ids) VALUES ($1, $2, '{}')`,
          [RECORD.instanceId, RECORD.idempotencyKey],
        );
        let settled = false;
        const claim = claimTaskRunsRecorded(store.pool, CLAIM, RECORD).finally(() => (settled = true));
        await new Promise((r) => setTimeout(r, 200));
        expect(settled).toBe(false); // waiting on the twin's uncommitted record
        await client.query(end === 'commits' ? 'COMMIT' : 'ROLLBACK');
        const answer = await claim;
        expect(answer === null ? null : answer.length).toBe(count);
        const starting = (await states()).filter((r) => r.state === 'STARTING');
        expect(starting).toHaveLength(count ?? 0);
      } finally {
        client.release();
        await twin.end();
      }
    },
  );

  it('is planned once per limit, like the plain claim: from the sixth call on it runs the cached plan', async () => {
    await queueMany(store.pool, await seedExecution(store.pool), 20);
    const one = createPool(store.url, { max: 1 });
    try {
      for (let i = 0; i < 10; i += 1) {
        const answer = await claimTaskRunsRecorded(one, CLAIM, { ...RECORD, idempotencyKey: `key-${i}` });
        expect(answer).toHaveLength(2);
      }
      const { rows } = await one.query(
        `SELECT name, generic_plans::int AS generic FROM pg_prepared_statements WHERE name LIKE 'sluice_claim%'`,
      );
      expect(rows).toEqual([{ name: 'sluice_claim_task_runs_recorded_2', generic: 5 }]);
    } finally {
      await one.end();
    }
  });
});
