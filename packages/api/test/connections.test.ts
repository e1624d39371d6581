import { listScheduledFlows } from '@sluice/store';
import { startApiHarness, type ApiHarness } from './harness';
import {
  CATALOG,
  connectionBody,
  connectionPath,
  ORDERS,
  postConnection,
  putConnection,
  SYNC_POOL,
  USERS,
} from './connection-fixtures';
import { A, caller, flowYaml, tokenOf, type Caller } from './workspaces';

// The connections API (docs/api.md#connections): a connection is stored as a
// flow with a schedule and one `sync` task, validated by the flow validator,
// and the flows API leaves it alone.

let h: ApiHarness;
let member: Caller;
let admin: Caller;
const NS = 'sync';
const SECRET_VALUE = 'hunter2-do-not-show';

beforeAll(async () => {
  h = await startApiHarness();
  member = caller(h.publicApp, await tokenOf(A, 'member'));
  admin = caller(h.publicApp, await tokenOf(A, 'admin'));
  expect((await admin.putSecret(`/api/v1/namespaces/${NS}/secrets/db-password`, SECRET_VALUE)).status).toBe(
    204,
  );
});
afterAll(() => h.close());

const flowsOf = async () =>
  (
    (await member.get(`/api/v1/namespaces/${NS}/flows?limit=500`)).body as {
      flows: Array<{ id: string; connection: boolean; schedule: string | null }>;
    }
  ).flows;

describe('POST and GET a connection', () => {
  it('stores it as a scheduled flow with one sync task, and shows it without secret values', async () => {
    const created = await postConnection(member, NS, 'pg-to-dw', connectionBody());
    expect(created.status).toBe(201);
    const got = await member.get(connectionPath(NS, 'pg-to-dw'));
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      namespace: NS,
      name: 'pg-to-dw',
      schedule: '*/15 * * * *',
      executor: { type: 'process', pool: SYNC_POOL },
      source: { command: ['node', 'source.js'], config: { password: { secret: 'db-password' } } },
      destination: { command: ['node', 'destination.js'] },
      // The builder filled in what the source defines: the users key, the orders cursor.
      streams: [
        { ...USERS, primaryKey: [['id']] },
        { ...ORDERS, destinationSyncMode: 'append', cursorField: ['seq'] },
      ],
      state: [],
      syncs: [],
      ledger: { entries: [], nextCursor: null },
    });
    expect(got.body.catalog.streams).toHaveLength(2);
    expect(JSON.stringify(got.body)).not.toContain(SECRET_VALUE);
    expect(JSON.stringify(created.body)).not.toContain(SECRET_VALUE);

    // The flow: marked, scheduled, with the sync task `sync` and its configured catalog.
    const flow = await member.get(`/api/v1/namespaces/${NS}/flows/pg-to-dw`);
    expect(flow.status).toBe(200);
    expect(flow.body.definition).toMatchObject({
      connection: true,
      schedule: '*/15 * * * *',
      concurrency: 1,
      tasks: [
        {
          id: 'sync',
          type: 'sync',
          source: { config: { password: { secret: 'db-password' } } },
          catalog: {
            streams: [
              { stream: { name: 'users' }, sync_mode: 'incremental', destination_sync_mode: 'append_dedup' },
              { stream: { name: 'orders', namespace: 'shop' }, cursor_field: ['seq'] },
            ],
          },
        },
      ],
    });
    expect(JSON.stringify(flow.body)).not.toContain(SECRET_VALUE);
    expect(await flowsOf()).toContainEqual(
      expect.objectContaining({ id: 'pg-to-dw', connection: true, schedule: '*/15 * * * *' }),
    );
    // What the scheduler reads: the flow is due every 15 minutes.
    const { flows } = await listScheduledFlows(h.pool);
    expect(flows).toContainEqual(
      expect.objectContaining({ workspace: A, namespace: NS, flowId: 'pg-to-dw', schedule: '*/15 * * * *' }),
    );
  });

  it('takes a big catalog: 150 selected streams, each with the source’s key and cursor', async () => {
    const streams = Array.from({ length: 150 }, (_, i) => ({
      name: `table_${i}`,
      json_schema: { type: 'object', properties: { id: { type: 'integer' } } },
      supported_sync_modes: ['incremental'],
      source_defined_cursor: true,
      default_cursor_field: ['id'],
      source_defined_primary_key: [['id']],
    }));
    const res = await postConnection(
      member,
      NS,
      'many-tables',
      connectionBody({
        catalog: { streams },
        streams: streams.map((s) => ({ name: s.name, syncMode: 'incremental' })),
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.streams).toHaveLength(150);
    // Written out in full: the flow's YAML has no anchors and aliases for the validator to count.
    const source = String((await member.get(`/api/v1/namespaces/${NS}/flows/many-tables`)).body.source);
    expect(source).not.toMatch(/&a\d+/);
    expect(source.match(/source_defined_primary_key:/g)).toHaveLength(150);
  });

  it('refuses a second connection or a flow of the same name (409)', async () => {
    expect((await postConnection(member, NS, 'pg-to-dw', connectionBody())).status).toBe(409);
    expect((await member.putYaml(`/api/v1/namespaces/${NS}/flows/plain`, flowYaml('x'))).status).toBe(200);
    const res = await postConnection(member, NS, 'plain', connectionBody());
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
  });
});

describe('an invalid connection', () => {
  const invalid = async (name: string, body: unknown) => {
    const res = await postConnection(member, NS, name, body);
    expect(res.status).toBe(422);
    // Nothing stored: neither the connection nor its flow.
    expect((await member.get(connectionPath(NS, name))).status).toBe(404);
    expect((await member.get(`/api/v1/namespaces/${NS}/flows/${name}`)).status).toBe(404);
    return (res.body as { errors: Array<{ code: string; path: string; message: string }> }).errors;
  };

  it('is a 422 naming each wrong field at its body path, with the flow validator\u2019s codes', async () => {
    const errors = await invalid(
      'broken',
      connectionBody({
        schedule: 'every day',
        source: { image: 'src:1', config: {} },
        streams: [USERS, { name: 'invoices', syncMode: 'incremental' }],
        colour: 'blue',
      }),
    );
    const found = errors.map((e) => `${e.code} ${e.path}`).sort();
    expect(found).toEqual(
      [
        'invalid_cron schedule',
        'invalid_value streams[1].name',
        'required source.command',
        'unknown_field colour',
      ].sort(),
    );
    const command = errors.find((e) => e.path === 'source.command')!;
    expect(command.message).toContain('process executor');
    expect(command.message).not.toContain('tasks[0]');
  });

  it('names a missing schedule, catalog and streams, and a selection the catalog cannot serve', async () => {
    const { schedule: _s, catalog: _c, streams: _t, ...rest } = connectionBody();
    expect((await invalid('bare', rest)).map((e) => `${e.code} ${e.path}`).sort()).toEqual([
      'required catalog',
      'required schedule',
      'required streams',
    ]);
    const selections = await invalid(
      'no-cursor',
      connectionBody({
        streams: [
          { name: 'users', syncMode: 'incremental', destinationSyncMode: 'append_dedup' },
          { ...ORDERS, syncMode: 'sometimes' },
        ],
      }),
    );
    expect(selections.map((e) => `${e.code} ${e.path}`)).toEqual(['invalid_value streams[1].syncMode']);
    const cursorless = await invalid(
      'cursorless',
      connectionBody({
        catalog: { streams: [{ ...CATALOG.streams[0], source_defined_primary_key: undefined }] },
        streams: [{ name: 'users', syncMode: 'incremental', destinationSyncMode: 'append_dedup' }],
      }),
    );
    expect(cursorless.map((e) => `${e.code} ${e.path}`).sort()).toEqual([
      'invalid_value streams[0].cursorField',
      'invalid_value streams[0].primaryKey',
    ]);
    expect(await invalid('not-json-object', [1, 2])).toEqual([
      expect.objectContaining({ code: 'invalid_type', path: '' }),
    ]);
  });

  it('is a 413 over the 4 MiB body limit, and nothing is stored', async () => {
    const huge = connectionBody({
      source: { command: ['x'], config: { blob: 'x'.repeat(4 * 1024 * 1024) } },
    });
    const res = await postConnection(member, NS, 'huge', huge);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    expect((await member.get(connectionPath(NS, 'huge'))).status).toBe(404);
  });

  it('is refused as JSON only, and in the naming rules', async () => {
    const res = await member
      .post(connectionPath(NS, 'yaml'))
      .set('Content-Type', 'application/yaml')
      .send('source: {}');
    expect(res.status).toBe(400);
    expect((await postConnection(member, NS, 'a..b', connectionBody())).status).toBe(400);
  });
});

describe('PUT', () => {
  it('replaces the streams; without a catalog it selects from the streams the connection has', async () => {
    expect((await postConnection(member, NS, 'edit-me', connectionBody())).status).toBe(201);
    const { catalog: _c, ...noCatalog } = connectionBody({ streams: [ORDERS], schedule: '0 * * * *' });
    const put = await putConnection(member, NS, 'edit-me', noCatalog);
    expect(put.status).toBe(200);
    const got = await member.get(connectionPath(NS, 'edit-me'));
    expect(got.body.schedule).toBe('0 * * * *');
    expect(got.body.streams).toEqual([{ ...ORDERS, destinationSyncMode: 'append', cursorField: ['seq'] }]);
    // `users` is no longer known: adding it back needs the discovered catalog again.
    const back = await putConnection(member, NS, 'edit-me', { ...noCatalog, streams: [ORDERS, USERS] });
    expect(back.status).toBe(422);
    expect(back.body.errors).toEqual([expect.objectContaining({ path: 'streams[1].name' })]);
    const withCatalog = await putConnection(member, NS, 'edit-me', connectionBody());
    expect(withCatalog.status).toBe(200);
    expect(withCatalog.body.streams).toHaveLength(2);
  });

  it('leaves the connection as it was when the body is invalid, and is a 404 for no connection', async () => {
    const before = (await member.get(`/api/v1/namespaces/${NS}/flows/edit-me`)).body;
    expect((await putConnection(member, NS, 'edit-me', connectionBody({ schedule: '' }))).status).toBe(422);
    expect((await member.get(`/api/v1/namespaces/${NS}/flows/edit-me`)).body).toEqual(before);
    expect((await putConnection(member, NS, 'never', connectionBody())).status).toBe(404);
    // A plain flow is not a connection.
    expect((await putConnection(member, NS, 'plain', connectionBody())).status).toBe(404);
  });
});

describe('the flows API and a connection\u2019s flow', () => {
  it('refuses to change or delete it, or to write a flow marked as a connection', async () => {
    const flow = `/api/v1/namespaces/${NS}/flows/pg-to-dw`;
    const put = await member.putYaml(flow, flowYaml('over'));
    expect(put.status).toBe(409);
    expect(put.body.error.message).toContain(`/connections/pg-to-dw`);
    expect((await member.delete(flow)).status).toBe(409);
    const marked = await member.putYaml(
      `/api/v1/namespaces/${NS}/flows/sneaky`,
      `connection: true\n${flowYaml('x')}`,
    );
    expect(marked.status).toBe(422);
    expect(marked.body.errors).toEqual([
      expect.objectContaining({ code: 'invalid_value', path: 'connection' }),
    ]);
    expect((await member.get(`/api/v1/namespaces/${NS}/flows/sneaky`)).status).toBe(404);
    expect((await member.get(connectionPath(NS, 'pg-to-dw'))).status).toBe(200);
    expect((await flowsOf()).find((f) => f.id === 'plain')).toMatchObject({ connection: false });
  });
});

describe('GET /namespaces/{ns}/connections', () => {
  it('lists the connections by name, a page at a time, and no plain flow', async () => {
    const ns = 'paged';
    for (const name of ['c-3', 'c-1', 'c-2'])
      expect((await postConnection(member, ns, name, connectionBody())).status).toBe(201);
    expect((await member.putYaml(`/api/v1/namespaces/${ns}/flows/c-0`, flowYaml('x'))).status).toBe(200);
    const first = await member.get(`/api/v1/namespaces/${ns}/connections?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.connections.map((c: { name: string }) => c.name)).toEqual(['c-1', 'c-2']);
    expect(first.body.connections[0]).toMatchObject({ schedule: '*/15 * * * *', streams: 2 });
    const rest = await member.get(
      `/api/v1/namespaces/${ns}/connections?limit=2&cursor=${first.body.nextCursor}`,
    );
    expect(rest.body).toEqual({
      connections: [expect.objectContaining({ name: 'c-3' })],
      nextCursor: null,
    });
    expect((await member.get(`/api/v1/namespaces/${ns}/connections?cursor=nope`)).status).toBe(400);
  });
});
