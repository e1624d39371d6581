import {
  committedCursor,
  deliveries,
  DESTINATION_PG,
  ledger,
  putSyncFlow,
  range,
  runOutputs,
  runToEnd,
  SOURCE,
  tableIds,
  useSyncServer,
  type SyncRunView,
} from './sync-helpers';

/*
 * `sync` tasks on the process executor of a real standalone server, with the
 * example source and the PostgreSQL destination (docs/connectors.md#sync):
 * incremental syncs, a destination failing mid-sync, a runner killed mid-sync.
 */
const fixture = useSyncServer();

const destination = (schema: string, extra: Record<string, unknown> = {}) => ({
  command: DESTINATION_PG,
  config: { url: fixture.db.url, schema, ...extra },
});

test('an incremental sync run twice moves only the new records the second time; each record is stored once', async () => {
  const { api } = fixture;
  const source = (n: number) => ({
    command: SOURCE,
    config: { streams: ['users', 'orders'], records_per_stream: n, state_every: 100 },
  });
  await putSyncFlow(api, 'twice', {
    source: source(300),
    destination: destination('twice'),
    streams: ['users', 'orders'],
  });
  const first = await runToEnd(api, 'twice');
  expect(first.state).toBe('SUCCEEDED');
  const run1 = first.taskRuns[0] as SyncRunView;
  expect(run1.outputs).toMatchObject({ records_emitted: '600', records_committed: '600' });
  expect(await committedCursor(fixture.pg, 'twice', 'users')).toBe(300);

  await putSyncFlow(api, 'twice', {
    source: source(450),
    destination: destination('twice'),
    streams: ['users', 'orders'],
  });
  const second = await runToEnd(api, 'twice');
  expect(second.state).toBe('SUCCEEDED');
  expect((second.taskRuns[0] as SyncRunView).outputs).toMatchObject({
    records_emitted: '300',
    records_committed: '300',
  });
  expect(await tableIds(fixture.pg, 'twice', 'users')).toEqual(range(1, 450));
  expect(await tableIds(fixture.pg, 'twice', 'orders')).toEqual(range(1, 450));
  const runs = await deliveries(fixture.pg, 'twice', '');
  const secondRun = Math.max(...runs.map(([run]) => run));
  // The second sync delivered ids 301..450 of each stream, nothing before.
  expect(runs.filter(([run]) => run === secondRun).map(([, id]) => id)).toEqual([
    ...range(301, 450),
    ...range(301, 450),
  ]);
  expect(await committedCursor(fixture.pg, 'twice', 'orders')).toBe(450);
  const logs = (await api.logs(second.taskRuns[0]!.id)).map((l) => l.line);
  expect(logs).toEqual(expect.arrayContaining(['sync started from the committed state']));
}, 120_000);

test('a destination failing mid-sync: the committed state stays at what it acknowledged and the retry resumes from it', async () => {
  const { api } = fixture;
  await putSyncFlow(api, 'dest-fails', {
    source: { command: SOURCE, config: { streams: ['users'], records_per_stream: 1000, state_every: 100 } },
    destination: destination('destfails', { fail_after_records: 250, fail_times: 1 }),
    maxAttempts: 2,
  });
  const execution = await runToEnd(api, 'dest-fails');
  expect(execution.state).toBe('SUCCEEDED');
  const [failed, retried] = execution.taskRuns as SyncRunView[];
  expect(failed).toMatchObject({ attempt: 1, state: 'FAILED' });
  expect(failed!.error).toContain('the destination failed: injected failure after 250 records');
  // Attempt 1 committed the states the destination echoed (100, 200), never past them.
  expect(await runOutputs(fixture.pg, failed!.id)).toMatchObject({
    records_committed: '200',
    states_committed: '2',
  });
  expect(retried).toMatchObject({ attempt: 2, state: 'SUCCEEDED' });
  expect(retried!.outputs).toMatchObject({ records_emitted: '800', records_committed: '800' });

  const runs = await deliveries(fixture.pg, 'destfails', '');
  const [run1, run2] = [...new Set(runs.map(([run]) => run))];
  expect(runs.filter(([run]) => run === run1).map(([, id]) => id)).toEqual(range(1, 250));
  // Only the records after the committed state were sent again.
  expect(runs.filter(([run]) => run === run2).map(([, id]) => id)).toEqual(range(201, 1000));
  expect(await tableIds(fixture.pg, 'destfails', 'users')).toEqual(range(1, 1000));
  const rows = await ledger(fixture.pg, 'dest-fails');
  expect(rows.filter((r) => r.attempt === 1).map((r) => r.records)).toEqual([100, 100]);
  expect(rows.filter((r) => r.attempt === 2).reduce((n, r) => n + r.records, 0)).toBe(800);
}, 120_000);

test('kill -9 of the runner mid-sync: the attempt is lost and the retry finishes from the last committed state', async () => {
  const { api } = fixture;
  await putSyncFlow(api, 'killed', {
    source: { command: SOURCE, config: { streams: ['users'], records_per_stream: 2000, state_every: 50 } },
    // About 5 s in all: time to kill it after its first commits.
    destination: destination('killed', { delay_ms_per_record: 2.5 }),
    maxAttempts: 2,
  });
  const id = await api.run('syncs', 'killed');
  const running = await api.waitFor(id, (e) => e.taskRuns[0]?.externalRef?.startsWith('pid:') === true);
  const pid = Number(running.taskRuns[0]!.externalRef!.slice(4));
  for (let i = 0; (await ledger(fixture.pg, 'killed')).length < 2; i++) {
    if (i > 300) throw new Error('no commit within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  process.kill(pid, 'SIGKILL');
  const execution = await api.waitFor(id, (e) => ['SUCCEEDED', 'FAILED'].includes(e.state), 120_000);
  expect(execution.state).toBe('SUCCEEDED');
  const [lost, retried] = execution.taskRuns as SyncRunView[];
  expect(lost).toMatchObject({ attempt: 1, state: 'FAILED', reason: 'lost' });
  expect(retried).toMatchObject({ attempt: 2, state: 'SUCCEEDED' });

  const rows = await ledger(fixture.pg, 'killed');
  const attempts = [...new Set(rows.map((r) => r.attempt))];
  expect(attempts).toEqual([1, 2]);
  const committedByFirst = rows.filter((r) => r.attempt === 1).reduce((n, r) => n + r.records, 0);
  expect(retried!.outputs).toMatchObject({ records_committed: String(2000 - committedByFirst) });
  // The retry's deliveries start right after attempt 1's last committed cursor.
  const runs = await deliveries(fixture.pg, 'killed', '');
  const last = Math.max(...runs.map(([run]) => run));
  expect(runs.filter(([run]) => run === last).map(([, id]) => id)).toEqual(range(committedByFirst + 1, 2000));
  expect(await tableIds(fixture.pg, 'killed', 'users')).toEqual(range(1, 2000));
  expect(await committedCursor(fixture.pg, 'killed', 'users')).toBe(2000);
}, 180_000);
