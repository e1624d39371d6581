import { configureCatalog, type AirbyteCatalog, type StreamSelection } from '@sluice/connector-protocol';

const schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    updated_at: { type: 'string' },
    address: { type: 'object', properties: { city: { type: 'string' } } },
  },
};

const catalog: AirbyteCatalog = {
  streams: [
    // The source defines cursor and key.
    {
      name: 'users',
      json_schema: schema,
      supported_sync_modes: ['full_refresh', 'incremental'],
      source_defined_cursor: true,
      default_cursor_field: ['id'],
      source_defined_primary_key: [['id']],
      x_custom: 1,
    },
    // The user picks cursor and key.
    {
      name: 'events',
      namespace: 'app',
      json_schema: schema,
      supported_sync_modes: ['full_refresh', 'incremental'],
    },
    { name: 'snapshots', json_schema: schema, supported_sync_modes: ['full_refresh'] },
  ],
};

const select = (s: Partial<StreamSelection> & { name: string }): StreamSelection => ({
  syncMode: 'full_refresh',
  destinationSyncMode: 'append',
  ...s,
});

describe('configureCatalog', () => {
  it('builds the configured catalog from the selected streams, with the source-defined cursor and key', () => {
    const result = configureCatalog(catalog, [
      select({ name: 'users', syncMode: 'incremental', destinationSyncMode: 'append_dedup' }),
      select({
        name: 'events',
        namespace: 'app',
        syncMode: 'incremental',
        destinationSyncMode: 'append_dedup',
        cursorField: ['address', 'city'],
        primaryKey: [['id'], ['updated_at']],
      }),
    ]);
    expect(result).toEqual({
      ok: true,
      catalog: {
        streams: [
          {
            stream: catalog.streams[0],
            sync_mode: 'incremental',
            destination_sync_mode: 'append_dedup',
            cursor_field: ['id'],
            primary_key: [['id']],
          },
          {
            stream: catalog.streams[1],
            sync_mode: 'incremental',
            destination_sync_mode: 'append_dedup',
            cursor_field: ['address', 'city'],
            primary_key: [['id'], ['updated_at']],
          },
        ],
      },
    });
    // Fields of the discovered stream the protocol does not define go to the connectors as discovered.
    if (result.ok) expect(result.catalog.streams[0]?.stream.x_custom).toBe(1);
  });

  it('takes the default cursor field when the user gives none', () => {
    const withDefault: AirbyteCatalog = {
      streams: [{ ...catalog.streams[1]!, namespace: undefined, default_cursor_field: ['updated_at'] }],
    };
    const result = configureCatalog(withDefault, [select({ name: 'events', syncMode: 'incremental' })]);
    expect(result.ok && result.catalog.streams[0]?.cursor_field).toEqual(['updated_at']);
  });

  it('names the stream and the field of every wrong selection', () => {
    const result = configureCatalog(
      catalog,
      [
        select({ name: 'snapshots', syncMode: 'incremental', cursorField: ['id'] }),
        select({ name: 'events', namespace: 'app', syncMode: 'incremental', cursorField: ['missing'] }),
        select({ name: 'events', namespace: 'app' }),
        select({ name: 'nope' }),
        select({
          name: 'users',
          syncMode: 'incremental',
          cursorField: ['updated_at'],
          primaryKey: [['updated_at']],
        }),
        select({ name: 'events', syncMode: 'incremental', destinationSyncMode: 'overwrite' }),
      ],
      { destinationSyncModes: ['append', 'append_dedup'] },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      {
        stream: 'snapshots',
        field: 'syncMode',
        message: 'incremental is not supported (the stream supports full_refresh)',
      },
      {
        stream: 'app.events',
        field: 'cursorField',
        message: `["missing"] is not in the stream's json_schema`,
      },
      { stream: 'app.events', field: 'name', message: 'the stream is selected twice' },
      { stream: 'nope', field: 'name', message: 'the stream is not in the discovered catalog' },
      {
        stream: 'users',
        field: 'cursorField',
        message: 'the source defines the cursor (["id"]); ["updated_at"] cannot replace it',
      },
      {
        stream: 'users',
        field: 'primaryKey',
        message: 'the source defines the primary key (["id"]); it cannot be replaced',
      },
      // `events` without a namespace is another stream than app.events.
      { stream: 'events', field: 'name', message: 'the stream is not in the discovered catalog' },
    ]);
  });

  it('rejects what the destination or the sync mode cannot do', () => {
    const result = configureCatalog(
      catalog,
      [
        select({ name: 'users', syncMode: 'incremental', destinationSyncMode: 'overwrite' }),
        select({ name: 'events', namespace: 'app', syncMode: 'incremental' }),
        select({ name: 'snapshots', destinationSyncMode: 'append_dedup' }),
      ],
      { destinationSyncModes: ['append', 'append_dedup'] },
    );
    expect(!result.ok && result.errors).toEqual([
      {
        stream: 'users',
        field: 'destinationSyncMode',
        message: 'overwrite is not supported by the destination (it supports append, append_dedup)',
      },
      {
        stream: 'users',
        field: 'destinationSyncMode',
        message: 'overwrite cannot be combined with incremental (use append or append_dedup)',
      },
      {
        stream: 'app.events',
        field: 'cursorField',
        message: 'incremental needs a cursor field and the source defines none',
      },
      {
        stream: 'snapshots',
        field: 'primaryKey',
        message: 'append_dedup needs a primary key and the source defines none',
      },
    ]);
  });

  it('checks a user primary key against the schema and rejects an empty selection', () => {
    const bad = configureCatalog(catalog, [select({ name: 'snapshots', primaryKey: [['address', 'zip']] })]);
    expect(!bad.ok && bad.errors).toEqual([
      {
        stream: 'snapshots',
        field: 'primaryKey',
        message: `["address","zip"] is not in the stream's json_schema`,
      },
    ]);
    const none = configureCatalog(catalog, []);
    expect(!none.ok && none.errors).toEqual([
      { stream: '', field: 'streams', message: 'no stream is selected' },
    ]);
  });
});
