import {
  committedCursor,
  deliveries,
  DESTINATION_PG,
  NAMESPACE,
  range,
  runToEnd,
  SOURCE,
  tableIds,
  useSyncServer,
} from './sync-helpers';

/*
 * A connection end to end on a real standalone server (docs/api.md#connections):
 * a discover task's catalog → POST …/connections → its flow syncs with the
 * example source and PostgreSQL destination → GET shows the committed state,
 * the sync's emitted and committed records and the ledger → a reset of one
 * stream makes the next sync read that stream from scratch, and only it.
 */
const fixture = useSyncServer();

interface ConnectionView {
  state: Array<{ stream: { name: string } | null }>;
  syncs: Array<{ state: string; attempts: Array<Record<string, unknown>> }>;
  ledger: { entries: Array<{ records: number }> };
}

test('a connection from a discovered catalog syncs on its flow, shows its state and ledger, and resets a stream', async () => {
  const { api } = fixture;
  const sourceConfig = { streams: ['users', 'orders'], records_per_stream: 300, state_every: 100 };
  const discover = {
    tasks: [
      {
        id: 'discover',
        type: 'connector',
        operation: 'discover',
        connector: { command: SOURCE },
        config: sourceConfig,
      },
    ],
  };
  expect((await api.putFlow(NAMESPACE, 'discover-seq', JSON.stringify(discover))).status).toBe(200);
  const discovered = await runToEnd(api, 'discover-seq');
  expect(discovered.state).toBe('SUCCEEDED');
  const catalog = JSON.parse(String(discovered.taskRuns[0]!.outputs!.result)) as unknown;

  const path = `/api/v1/namespaces/${NAMESPACE}/connections/seq-to-pg`;
  const created = await api.call('POST', path, {
    source: { command: SOURCE, config: sourceConfig },
    destination: { command: DESTINATION_PG, config: { url: fixture.db.url, schema: 'conn' } },
    catalog,
    streams: ['users', 'orders'].map((name) => ({
      name,
      syncMode: 'incremental',
      destinationSyncMode: 'append_dedup',
    })),
    // Due once a year: the test starts its syncs itself.
    schedule: '0 0 1 1 *',
  });
  expect(created.status).toBe(201);

  const first = await runToEnd(api, 'seq-to-pg');
  expect(first.state).toBe('SUCCEEDED');
  const view = (await api.call('GET', path)).body as unknown as ConnectionView;
  expect(view.state.map((s) => s.stream?.name).sort()).toEqual(['orders', 'users']);
  expect(view.syncs[0]).toMatchObject({ state: 'SUCCEEDED' });
  expect(view.syncs[0]!.attempts[0]).toMatchObject({ recordsEmitted: 600, recordsCommitted: 600 });
  expect(view.ledger.entries.reduce((n, e) => n + e.records, 0)).toBe(600);
  expect(await committedCursor(fixture.pg, 'seq-to-pg', 'users')).toBe(300);

  const reset = await api.call('POST', `${path}/reset`, { streams: [{ name: 'users' }] });
  expect(reset.status).toBe(200);
  expect(await committedCursor(fixture.pg, 'seq-to-pg', 'users')).toBeNull();
  const second = await runToEnd(api, 'seq-to-pg');
  expect(second.state).toBe('SUCCEEDED');
  const runs = await deliveries(fixture.pg, 'conn', '');
  const last = Math.max(...runs.map(([run]) => run));
  // Only the reset stream was read again, from its first record; the table holds each record once.
  expect(runs.filter(([run]) => run === last).map(([, id]) => id)).toEqual(range(1, 300));
  expect(await tableIds(fixture.pg, 'conn', 'users')).toEqual(range(1, 300));
  expect(await tableIds(fixture.pg, 'conn', 'orders')).toEqual(range(1, 300));
  const after = (await api.call('GET', path)).body as unknown as ConnectionView;
  expect(after.syncs.map((s) => s.attempts[0]!.recordsCommitted)).toEqual([300, 600]);
}, 120_000);
