import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import {
  listExecutions,
  listExecutionsQuery,
  listNamespaces,
  LIST_NAMESPACES_SQL,
  type ExecutionListFilter,
  type ExecutionRecord,
} from '@sluice/store';
import { useStoreDatabase } from './fixtures';

// The public API's lists (docs/api.md#pagination): newest first, paged by
// (created_at, id), inside one workspace, each served by an index.

const store = useStoreDatabase();

/** `count` executions of one flow, created 1 s apart ending `endAt`; returns their ids. */
async function insertExecutions(
  pool: Pool,
  count: number,
  over: { workspace?: string; namespace?: string; flowId?: string; state?: string; endAt?: Date } = {},
): Promise<void> {
  await pool.query(
    `INSERT INTO executions (id, workspace, namespace, flow_id, definition, state, created_at)
     SELECT gen_random_uuid(), $1, $2, $3, '{}', $4, $5::timestamptz - (i * interval '1 second')
     FROM generate_series(0, $6 - 1) AS i`,
    [
      over.workspace ?? 'w',
      over.namespace ?? 'etl',
      over.flowId ?? 'daily',
      over.state ?? 'SUCCEEDED',
      over.endAt ?? new Date(),
      count,
    ],
  );
}

async function all(filter: ExecutionListFilter, limit: number): Promise<ExecutionRecord[]> {
  const out: ExecutionRecord[] = [];
  for (;;) {
    const last = out.at(-1);
    const page = await listExecutions(store.pool, filter, {
      limit,
      after: last ? { createdAt: last.createdAt, id: last.id } : undefined,
    });
    out.push(...page);
    if (page.length < limit) return out;
  }
}

describe('listExecutions', () => {
  beforeEach(() => store.pool.query('TRUNCATE executions CASCADE'));

  it('lists every execution exactly once, newest first, while new ones are inserted between pages', async () => {
    // Several executions share a created_at: the id breaks the tie.
    const sameTime = new Date(Date.now() - 60_000);
    await insertExecutions(store.pool, 40, { endAt: sameTime });
    for (let i = 0; i < 15; i++) await insertExecutions(store.pool, 1, { endAt: sameTime });
    const before = (await store.pool.query<{ id: string }>('SELECT id FROM executions')).rows.map(
      (r) => r.id,
    );

    const seen: ExecutionRecord[] = [];
    for (;;) {
      const last = seen.at(-1);
      const page = await listExecutions(
        store.pool,
        { workspace: 'w' },
        { limit: 7, after: last ? { createdAt: last.createdAt, id: last.id } : undefined },
      );
      seen.push(...page);
      // Someone starts executions while the client pages.
      await insertExecutions(store.pool, 3);
      if (page.length < 7) break;
    }
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...before].sort());
    const keys = seen.map((e) => [e.createdAt.getTime(), e.id] as const);
    const sorted = [...keys].sort((a, b) => (b[0] - a[0] !== 0 ? b[0] - a[0] : b[1] < a[1] ? -1 : 1));
    expect(keys).toEqual(sorted);
  });

  it('filters by namespace, flow, state and time range, and never shows another workspace', async () => {
    const t0 = new Date('2026-06-01T12:00:00.000Z');
    await insertExecutions(store.pool, 10, { endAt: t0 });
    await insertExecutions(store.pool, 5, { flowId: 'hourly', state: 'FAILED', endAt: t0 });
    await insertExecutions(store.pool, 4, { namespace: 'ops', endAt: t0 });
    await insertExecutions(store.pool, 20, { workspace: 'other', endAt: t0 });

    const count = async (f: Omit<ExecutionListFilter, 'workspace'>) => await all({ workspace: 'w', ...f }, 3);
    expect(await count({})).toHaveLength(19);
    expect(await count({ namespace: 'etl' })).toHaveLength(15);
    expect(await count({ namespace: 'etl', flowId: 'hourly' })).toHaveLength(5);
    expect((await count({ state: 'FAILED' })).map((e) => e.flowId)).toEqual(Array(5).fill('hourly'));
    // [t0 - 3 s, t0 - 1 s): created at t0 - 3 s and t0 - 2 s, of each of the three flows.
    const range = await count({
      createdAfter: new Date(t0.getTime() - 3000),
      createdBefore: new Date(t0.getTime() - 1000),
    });
    expect(range).toHaveLength(6);
    expect(range.every((e) => e.createdAt.getTime() < t0.getTime() - 999)).toBe(true);
    for (const e of await count({})) expect(e.workspace).toBe('w');
    expect(await all({ workspace: 'nobody' }, 50)).toEqual([]);
  });

  it('reads its index backwards and stops at the limit, on a large table', async () => {
    for (const workspace of ['w', 'other'])
      for (const namespace of ['etl', 'ops'])
        for (const flowId of ['daily', 'hourly'])
          await insertExecutions(store.pool, 5000, { workspace, namespace, flowId });
    await store.pool.query('ANALYZE executions');
    const cursor = { createdAt: new Date(Date.now() - 1000_000), id: randomUUID() };
    const cases: Array<[Omit<ExecutionListFilter, 'workspace'>, string]> = [
      [{}, 'executions_workspace_created_at_id_idx'],
      [{ namespace: 'etl' }, 'executions_workspace_namespace_created_at_id_idx'],
      [{ namespace: 'etl', flowId: 'daily' }, 'executions_workspace_namespace_flow_id_created_at_id_idx'],
    ];
    for (const [filter, index] of cases) {
      for (const after of [undefined, cursor]) {
        const q = listExecutionsQuery({ workspace: 'w', ...filter }, { limit: 50, after });
        const { rows } = await store.pool.query(`EXPLAIN (FORMAT JSON) ${q.text}`, q.values);
        const plan = JSON.stringify(rows[0]['QUERY PLAN']);
        expect({ filter, after, index: plan.includes(`"Index Name":"${index}"`) }).toEqual({
          filter,
          after,
          index: true,
        });
        expect(plan).toContain('"Scan Direction":"Backward"');
        expect(plan).not.toContain('"Node Type":"Sort"');
        expect(plan).not.toContain('"Node Type":"Seq Scan"');
      }
    }
  });
});

describe('listNamespaces', () => {
  it("lists the workspace's namespaces of flows, files, secrets and executions, by name, in pages", async () => {
    await store.pool.query('TRUNCATE executions, flows, namespace_files, secrets CASCADE');
    await store.pool.query(
      `INSERT INTO flows (workspace, namespace, flow_id, source, definition) VALUES
         ('w', 'b-flows', 'f', '', '{}'), ('w', 'b-flows', 'g', '', '{}'), ('other', 'x-other', 'f', '', '{}')`,
    );
    await store.pool.query(
      `INSERT INTO namespace_files (workspace, namespace, path, content, sha256) VALUES ('w', 'c-files', 'a', '', '')`,
    );
    await store.pool.query(
      `INSERT INTO secrets (workspace, namespace, name, key_id, iv, tag, ciphertext)
       VALUES ('w', 'd-secrets', 's', 'k', '', '', '')`,
    );
    await insertExecutions(store.pool, 30, { namespace: 'a-runs' });
    await insertExecutions(store.pool, 30, { namespace: 'b-flows' });
    await insertExecutions(store.pool, 3, { workspace: 'other', namespace: 'y-other' });

    expect(await listNamespaces(store.pool, 'w', { limit: 50 })).toEqual([
      'a-runs',
      'b-flows',
      'c-files',
      'd-secrets',
    ]);
    expect(await listNamespaces(store.pool, 'w', { limit: 2 })).toEqual(['a-runs', 'b-flows']);
    expect(await listNamespaces(store.pool, 'w', { limit: 2, after: 'b-flows' })).toEqual([
      'c-files',
      'd-secrets',
    ]);
    expect(await listNamespaces(store.pool, 'other', { limit: 50 })).toEqual(['x-other', 'y-other']);
    const { rows } = await store.pool.query(`EXPLAIN (FORMAT JSON) ${LIST_NAMESPACES_SQL}`, ['w', '', 50]);
    // Any index led by (workspace, namespace) serves the walk; never a scan of every execution.
    const plan = JSON.stringify(rows[0]['QUERY PLAN']);
    expect(plan).toMatch(/"Index Name":"executions_workspace_namespace_[a-z_]*_idx"/);
    expect(plan).not.toContain('"Node Type":"Seq Scan"');
  });
});
