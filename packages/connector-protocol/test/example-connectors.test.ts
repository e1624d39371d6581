import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import {
  applyCommittedState,
  configureCatalog,
  ConnectorOutputParser,
  type CatalogMessage,
  type ConfiguredAirbyteCatalog,
  type ConnectorMessage,
  type StateMessage,
} from '@sluice/connector-protocol';
import {
  DESTINATION,
  NULL_DESTINATION,
  SOURCE,
  fileWriter,
  incrementalCatalog,
  runConnector,
  stateFileContent,
  syncThrough,
} from './connector-harness';

const run = promisify(execFile);

const ofType = <T extends ConnectorMessage['type']>(messages: ConnectorMessage[], type: T) =>
  messages.filter((m): m is Extract<ConnectorMessage, { type: T }> => m.type === type);

const cursorOf = (m: StateMessage) =>
  m.state.type === 'STREAM'
    ? [m.state.stream.stream_descriptor.name, m.state.stream.stream_state?.cursor]
    : null;

describe('source-sequence', () => {
  const file = fileWriter();
  const config = file('config.json', {
    streams: ['users', 'orders'],
    records_per_stream: 25,
    state_every: 10,
  });

  async function discovered(): Promise<ConfiguredAirbyteCatalog> {
    const { messages } = await runConnector(SOURCE, ['discover', '--config', config]);
    return incrementalCatalog(ofType(messages, 'CATALOG')[0]!.catalog);
  }

  it('answers spec, check and discover', async () => {
    const spec = await runConnector(SOURCE, ['spec']);
    expect(spec.code).toBe(0);
    expect(ofType(spec.messages, 'SPEC')[0]?.spec.connectionSpecification).toMatchObject({ type: 'object' });

    const ok = await runConnector(SOURCE, ['check', '--config', config]);
    expect(ok.messages).toEqual([{ type: 'CONNECTION_STATUS', connectionStatus: { status: 'SUCCEEDED' } }]);
    const bad = await runConnector(SOURCE, [
      'check',
      '--config',
      file('bad.json', { streams: ['Users'], records_per_stream: -1 }),
    ]);
    expect(bad.code).toBe(0);
    expect(bad.messages).toEqual([
      {
        type: 'CONNECTION_STATUS',
        connectionStatus: {
          status: 'FAILED',
          message: expect.stringMatching(
            /stream name "Users" must match .*records_per_stream must be an integer >= 0/,
          ),
        },
      },
    ]);

    const discover = await runConnector(SOURCE, ['discover', '--config', config]);
    const catalog = (discover.messages[0] as CatalogMessage).catalog;
    expect(catalog.streams.map((s) => s.name)).toEqual(['users', 'orders']);
    const configured = configureCatalog(
      catalog,
      catalog.streams.map((s) => ({
        name: s.name,
        syncMode: 'incremental',
        destinationSyncMode: 'append_dedup',
      })),
    );
    expect(configured.ok && configured.catalog.streams[0]).toMatchObject({
      cursor_field: ['id'],
      primary_key: [['id']],
    });
  });

  it('reads every record with a state every state_every records, in protocol lines only', async () => {
    const catalog = file('catalog.json', await discovered());
    const read = await runConnector(SOURCE, ['read', '--config', config, '--catalog', catalog]);
    expect(read.code).toBe(0);
    expect(read.lines.filter((p) => p.kind !== 'message')).toEqual([]);
    const records = ofType(read.messages, 'RECORD');
    expect(records).toHaveLength(50);
    expect(records.filter((r) => r.record.stream === 'users').map((r) => r.record.data.id)).toEqual(
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    expect(ofType(read.messages, 'STATE').map(cursorOf)).toEqual([
      ['users', 10],
      ['users', 20],
      ['users', 25],
      ['orders', 10],
      ['orders', 20],
      ['orders', 25],
    ]);
    // record_size_bytes (default 200) is the size of each RECORD line.
    const sizes = read.lines.flatMap((p) =>
      p.kind === 'message' && p.message.type === 'RECORD' ? [p.bytes] : [],
    );
    expect(new Set(sizes)).toEqual(new Set([200]));
  });

  it('resumes after the cursor of each stream in --state', async () => {
    const catalog = file('catalog.json', await discovered());
    const state = file('state.json', [
      { type: 'STREAM', stream: { stream_descriptor: { name: 'users' }, stream_state: { cursor: 22 } } },
    ]);
    const read = await runConnector(SOURCE, [
      'read',
      '--config',
      config,
      '--catalog',
      catalog,
      '--state',
      state,
    ]);
    const ids = ofType(read.messages, 'RECORD').map((r) => `${r.record.stream}:${r.record.data.id}`);
    expect(ids.filter((id) => id.startsWith('users'))).toEqual(['users:23', 'users:24', 'users:25']);
    expect(ids.filter((id) => id.startsWith('orders'))).toHaveLength(25);
  });

  it('fails a read with an invalid config with a TRACE config error and exit code 1', async () => {
    const catalog = file('catalog.json', await discovered());
    const read = await runConnector(SOURCE, ['read', '--config', file('bad.json', {}), '--catalog', catalog]);
    expect(read.code).toBe(1);
    expect(ofType(read.messages, 'TRACE')[0]?.trace.error).toMatchObject({
      failure_type: 'config_error',
      message: expect.stringContaining('records_per_stream'),
    });
  });
});

describe('destination-null', () => {
  it('drops the records and echoes each state', async () => {
    const file = fileWriter();
    const config = file('source.json', { streams: ['users'], records_per_stream: 5, state_every: 2 });
    const { messages } = await runConnector(SOURCE, ['discover', '--config', config]);
    const catalog = file('catalog.json', incrementalCatalog(ofType(messages, 'CATALOG')[0]!.catalog));
    const read = await runConnector(SOURCE, ['read', '--config', config, '--catalog', catalog]);
    const input = read.lines.flatMap((p) => (p.kind === 'message' ? [p.text] : [])).join('\n') + '\n';
    const write = await runConnector(
      NULL_DESTINATION,
      ['write', '--config', file('null.json', {}), '--catalog', catalog],
      input,
    );
    expect(write.code).toBe(0);
    expect(write.messages.map((m) => (m.type === 'STATE' ? cursorOf(m) : m.type))).toEqual([
      ['users', 2],
      ['users', 4],
      ['users', 5],
    ]);
  });
});

describe('destination-postgres with source-sequence', () => {
  let db: TestDatabase;
  let client: Client;
  const file = fileWriter();

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    client = new Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  const sourceConfig = (records: number) =>
    file(`source-${records}.json`, {
      streams: ['users', 'orders'],
      records_per_stream: records,
      state_every: 10,
    });
  const ids = async (table: string) =>
    (await client.query<{ id: number }>(`SELECT (data->>'id')::int AS id FROM ${table} ORDER BY 1`)).rows.map(
      (r) => r.id,
    );
  const deliveries = async (prefix: string) =>
    (
      await client.query<{ run: number; ids: number[] }>(
        `SELECT dense_rank() OVER (ORDER BY run_id)::int AS run, array_agg((pk::jsonb->>0)::int ORDER BY id) AS ids
           FROM ${prefix}_sluice_deliveries WHERE stream = 'users' GROUP BY run_id ORDER BY run_id`,
      )
    ).rows;
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  async function catalogFile(): Promise<string> {
    const { messages } = await runConnector(SOURCE, ['discover', '--config', sourceConfig(1)]);
    return file('catalog.json', incrementalCatalog(ofType(messages, 'CATALOG')[0]!.catalog));
  }

  it('answers spec and check', async () => {
    const spec = await runConnector(DESTINATION, ['spec']);
    expect(ofType(spec.messages, 'SPEC')[0]?.spec.supported_destination_sync_modes).toEqual([
      'append',
      'overwrite',
      'append_dedup',
    ]);
    const ok = await runConnector(DESTINATION, ['check', '--config', file('d.json', { url: db.url })]);
    expect(ok.messages).toEqual([{ type: 'CONNECTION_STATUS', connectionStatus: { status: 'SUCCEEDED' } }]);
    const wrongDb = new URL(db.url);
    wrongDb.pathname = '/no_such_database';
    const bad = await runConnector(DESTINATION, [
      'check',
      '--config',
      file('bad.json', { url: wrongDb.toString() }),
    ]);
    expect(bad.code).toBe(0);
    expect(bad.messages).toEqual([
      {
        type: 'CONNECTION_STATUS',
        connectionStatus: { status: 'FAILED', message: expect.stringContaining('no_such_database') },
      },
    ]);
  });

  it('source read | destination write: each record once, then a second incremental read moves only new records', async () => {
    const catalog = await catalogFile();
    const destination = file('dest-pipe.json', { url: db.url, table_prefix: 'pipe_' });
    const pipe = async (records: number, state?: string) => {
      const read = [
        'read',
        '--config',
        sourceConfig(records),
        '--catalog',
        catalog,
        ...(state ? ['--state', state] : []),
      ];
      const { stdout } = await run('sh', [
        '-c',
        `"$0" "$1" ${read.map((_, i) => `"$${i + 2}"`).join(' ')} | "$0" "${DESTINATION}" write --config "${destination}" --catalog "${catalog}"`,
        process.execPath,
        SOURCE,
        ...read,
      ]);
      return new ConnectorOutputParser()
        .push(stdout)
        .flatMap((p) => (p.kind === 'message' ? [p.message] : []));
    };
    const first = await pipe(25);
    const echoed = ofType(first, 'STATE');
    expect(echoed.map(cursorOf)).toEqual([
      ['users', 10],
      ['users', 20],
      ['users', 25],
      ['orders', 10],
      ['orders', 20],
      ['orders', 25],
    ]);
    expect(await ids('pipe_users')).toEqual(range(1, 25));
    expect(await ids('pipe_orders')).toEqual(range(1, 25));

    // The committed state from the echoes is the next read's --state.
    const committed = echoed.reduce<ReturnType<typeof applyCommittedState> | undefined>(
      (c, m) => applyCommittedState(c, m.state),
      undefined,
    );
    await pipe(40, file('state-pipe.json', stateFileContent(committed)));
    expect(await ids('pipe_users')).toEqual(range(1, 40));
    expect(await ids('pipe_orders')).toEqual(range(1, 40));
    expect(await deliveries('pipe_')).toEqual([
      { run: 1, ids: range(1, 25) },
      { run: 2, ids: range(26, 40) },
    ]);
  });

  it('a destination that fails mid-sync: the committed state stops at what it acknowledged, the retry resumes from it', async () => {
    const catalog = await catalogFile();
    const destination = file('dest-fail.json', {
      url: db.url,
      table_prefix: 'fail_',
      fail_after_records: 15,
      fail_times: 1,
    });
    const attempt1 = await syncThrough(
      ['read', '--config', sourceConfig(30), '--catalog', catalog],
      ['write', '--config', destination, '--catalog', catalog],
    );
    expect(attempt1.destinationCode).toBe(1);
    expect(ofType(attempt1.destinationMessages, 'TRACE')[0]?.trace.error?.message).toBe(
      'injected failure after 15 records (fail_after_records)',
    );
    // Records 11–15 reached the destination but were never committed, and their state never echoed.
    expect(attempt1.commits.map((c) => cursorOf(c.message))).toEqual([['users', 10]]);
    expect(attempt1.tracker.committedTotals).toEqual({ users: { records: 10, bytes: 2000 } });
    expect(attempt1.tracker.emitted.users?.records).toBeGreaterThanOrEqual(15);
    expect(await ids('fail_users')).toEqual(range(1, 10));

    const attempt2 = await syncThrough(
      [
        'read',
        '--config',
        sourceConfig(30),
        '--catalog',
        catalog,
        '--state',
        file('s.json', stateFileContent(attempt1.tracker.committed)),
      ],
      ['write', '--config', destination, '--catalog', catalog],
      attempt1.tracker.committed,
    );
    expect(attempt2.destinationCode).toBe(0);
    expect(attempt2.tracker.pendingStates).toBe(0);
    expect(attempt2.tracker.committedTotals).toEqual({
      users: { records: 20, bytes: 4000 },
      orders: { records: 30, bytes: 6000 },
    });
    expect(attempt2.tracker.committed).toEqual({
      type: 'STREAM',
      streams: [
        { type: 'STREAM', stream: { stream_descriptor: { name: 'users' }, stream_state: { cursor: 30 } } },
        { type: 'STREAM', stream: { stream_descriptor: { name: 'orders' }, stream_state: { cursor: 30 } } },
      ],
    });
    // No duplicates, no gaps; only the records after the committed state were delivered again.
    expect(await ids('fail_users')).toEqual(range(1, 30));
    expect(await ids('fail_orders')).toEqual(range(1, 30));
    expect(await deliveries('fail_')).toEqual([
      { run: 1, ids: range(1, 15) },
      { run: 2, ids: range(11, 30) },
    ]);
  });
});
