import {
  claimTaskRunsSql,
  claimTaskRuns,
  createPool,
  getTaskRun,
  type ClaimedTaskRunRow,
} from '@sluice/store';
import { queueMany, queueOne, seedExecution, useStoreDatabase } from './fixtures';

describe('claimTaskRuns', () => {
  const store = useStoreDatabase();
  // Each test starts with an empty queue.
  beforeEach(() => store.pool.query('DELETE FROM executions'));

  it('8 concurrent claimers take each of 2,000 queued task runs exactly once', async () => {
    const execution = await seedExecution(store.pool);
    await queueMany(store.pool, execution, 2000);
    // One connection per claimer, so the claims really run side by side.
    const claimers = Array.from({ length: 8 }, () => createPool(store.url, { max: 1 }));
    try {
      const claimed = await Promise.all(
        claimers.map(async (p, n) => {
          const mine: ClaimedTaskRunRow[] = [];
          for (;;) {
            const batch = await claimTaskRuns(p, {
              ownerId: `claimer-${n}`,
              executorTypes: ['process'],
              pools: ['default'],
              limit: 7,
            });
            if (batch.length === 0) return mine;
            mine.push(...batch);
          }
        }),
      );
      const all = claimed.flat();
      expect(all).toHaveLength(2000);
      expect(new Set(all.map((r) => r.id)).size).toBe(2000);
      expect(claimed.filter((c) => c.length > 0).length).toBeGreaterThan(1);
      for (const r of all) expect(r).toMatchObject({ fence: 1 });

      const { rows } = await store.pool.query(
        `SELECT state, count(*)::int AS n, count(DISTINCT owner_id)::int AS owners FROM task_runs GROUP BY state`,
      );
      expect(rows).toEqual([{ state: 'STARTING', n: 2000, owners: 8 }]);
    } finally {
      await Promise.all(claimers.map((p) => p.end()));
    }
  });

  it('claims only the executor types and pools asked for; inline regardless of pool', async () => {
    const execution = await seedExecution(store.pool);
    const processDefault = await queueOne(store.pool, execution, {
      executorType: 'process',
      pool: 'default',
    });
    const processGpu = await queueOne(store.pool, execution, { executorType: 'process', pool: 'gpu' });
    const docker = await queueOne(store.pool, execution, { executorType: 'docker', pool: 'default' });
    const inline = await queueOne(store.pool, execution, { executorType: 'inline', pool: 'ignored' });
    expect(inline.pool).toBe('');

    const claimed = await claimTaskRuns(store.pool, {
      ownerId: 'a',
      executorTypes: ['process', 'inline'],
      pools: ['default'],
      limit: 10,
    });
    expect(claimed.map((r) => r.id).sort()).toEqual([processDefault.id, inline.id].sort());
    expect((await getTaskRun(store.pool, processGpu.id))?.state).toBe('QUEUED');
    expect((await getTaskRun(store.pool, docker.id))?.state).toBe('QUEUED');

    const gpu = await claimTaskRuns(store.pool, {
      ownerId: 'b',
      executorTypes: ['process'],
      pools: ['gpu'],
      limit: 10,
    });
    expect(gpu.map((r) => r.id)).toEqual([processGpu.id]);
    expect(gpu[0]).toMatchObject({ fence: 1, executorType: 'process', pool: 'gpu' });
    const stored = await getTaskRun(store.pool, processGpu.id);
    expect(stored).toMatchObject({ ownerId: 'b', state: 'STARTING', fence: 1 });
    expect(stored?.claimedAt).toBeInstanceOf(Date);
    expect(stored?.heartbeatAt).toBeInstanceOf(Date);
  });

  it('returns the oldest first, honours the limit and skips task runs not yet available', async () => {
    const execution = await seedExecution(store.pool);
    await queueMany(store.pool, execution, 5);
    const later = await queueOne(store.pool, execution, { availableAt: new Date(Date.now() + 60_000) });

    const first = await claimTaskRuns(store.pool, {
      ownerId: 'a',
      executorTypes: ['process'],
      pools: ['default'],
      limit: 3,
    });
    expect(first.map((r) => r.taskId)).toEqual(['t00000', 't00001', 't00002']);
    const rest = await claimTaskRuns(store.pool, {
      ownerId: 'a',
      executorTypes: ['process'],
      pools: ['default'],
      limit: 10,
    });
    expect(rest.map((r) => r.taskId)).toEqual(['t00003', 't00004']);
    expect((await getTaskRun(store.pool, later.id))?.state).toBe('QUEUED');

    await store.pool.query(`UPDATE task_runs SET available_at = now() - interval '1 second' WHERE id = $1`, [
      later.id,
    ]);
    const due = await claimTaskRuns(store.pool, {
      ownerId: 'a',
      executorTypes: ['process'],
      pools: ['default'],
      limit: 10,
    });
    expect(due.map((r) => r.id)).toEqual([later.id]);
  });

  it('uses the partial claim index and the primary key when the table is large, also in its cached plan', async () => {
    const execution = await seedExecution(store.pool);
    await queueMany(store.pool, execution, 20_000);
    // Most rows are history, as in production.
    await store.pool.query(`UPDATE task_runs SET state = 'SUCCEEDED' WHERE task_id > 't01000'`);
    await store.pool.query('ANALYZE task_runs');
    // The plan a connection keeps for the prepared claim from its sixth call on (the generic plan).
    const client = await store.pool.connect();
    let plan: unknown;
    try {
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE claim_10(text, text[], text[]) AS ${claimTaskRunsSql(10)}`);
      const { rows } = await client.query(
        `EXPLAIN (FORMAT JSON) EXECUTE claim_10('a', '{process,docker,inline}', '{default}')`,
      );
      plan = rows[0]['QUERY PLAN'];
    } finally {
      await client.query('DEALLOCATE ALL; RESET plan_cache_mode');
      client.release();
    }
    // The candidates are read in index order and the scan stops at the limit;
    // the claimed rows are updated through the primary key, never a scan of
    // the table; the only sort allowed is the final one over the (at most 10)
    // claimed rows.
    type PlanNode = { 'Node Type': string; 'Subplan Name'?: string; Plans?: PlanNode[] };
    const root = (plan as Array<{ Plan: PlanNode }>)[0]!.Plan;
    const find = (node: PlanNode, name: string): PlanNode | undefined =>
      node['Subplan Name'] === name ? node : node.Plans?.map((p) => find(p, name)).find(Boolean);
    const candidates = JSON.stringify(find(root, 'CTE candidates'));
    expect(candidates).toContain('"Index Name":"task_runs_claim_idx"');
    expect(candidates).not.toContain('"Node Type":"Sort"');
    const claimed = JSON.stringify(find(root, 'CTE claimed'));
    expect(claimed).toContain('"Index Name":"task_runs_pkey"');
    expect(JSON.stringify(plan)).not.toContain('"Node Type":"Seq Scan"');
  });

  describe('perPoolLimits', () => {
    it('caps active task runs of a pool over all claimers, counting runs already active', async () => {
      const execution = await seedExecution(store.pool);
      await queueMany(store.pool, execution, 30, { executorType: 'kubernetes', pool: 'k8s' });
      await queueOne(store.pool, execution, { executorType: 'kubernetes', pool: 'other' });
      const limits = [{ executorType: 'kubernetes' as const, pool: 'k8s', maxActive: 5 }];
      const claim = (ownerId: string) =>
        claimTaskRuns(store.pool, {
          ownerId,
          executorTypes: ['kubernetes'],
          pools: ['k8s', 'other'],
          limit: 4,
          perPoolLimits: limits,
        });

      const claimed = (await Promise.all(['a', 'b', 'c', 'd'].map(claim))).flat();
      const k8s = claimed.filter((r) => r.pool === 'k8s');
      expect(k8s).toHaveLength(5);
      expect(claimed.filter((r) => r.pool === 'other')).toHaveLength(1);
      expect(await claim('e')).toEqual([]);

      // A slot frees up: exactly one more may start.
      await store.pool.query(`UPDATE task_runs SET state = 'SUCCEEDED' WHERE id = $1`, [k8s[0]!.id]);
      expect(await claim('f')).toHaveLength(1);
    });

    it('needs a Pool because it runs its own transaction', async () => {
      const client = await store.pool.connect();
      try {
        await expect(
          claimTaskRuns(client, {
            ownerId: 'a',
            executorTypes: ['kubernetes'],
            pools: ['k8s'],
            limit: 1,
            perPoolLimits: [{ executorType: 'kubernetes', pool: 'k8s', maxActive: 1 }],
          }),
        ).rejects.toThrow(/perPoolLimits needs a Pool/);
      } finally {
        client.release();
      }
    });
  });
});
