import { z } from 'zod';
import { NextCursor } from './common';
import { named, Timestamp } from './registry';

/*
 * The connections API (docs/api.md#connections). A connection is stored as a
 * flow (`connection: true`, a schedule and one `sync` task); these schemas are
 * the API's view of it. The source, destination, executor, retry and timeout
 * are checked by the flow validator itself, so their problems come back with
 * the same codes as a flow file's, at the body's paths.
 */

const Config = z
  .record(z.string(), z.unknown())
  .describe(
    'The connector\u2019s config. A value `{"secret": "<name>"}` refers to a secret of the namespace; only the runner API resolves it, and no call returns its value.',
  );

export const ConnectorEndpoint = named(
  'ConnectorEndpoint',
  z.object({
    image: z.string().optional().describe('On the docker and kubernetes executors.'),
    command: z.array(z.string()).optional().describe('On the process executor.'),
    config: Config.optional(),
  }),
  'A source or destination: an image or a command, and its config (docs/connectors.md).',
);

export const StreamSelectionBody = named(
  'StreamSelection',
  z.strictObject({
    name: z.string().min(1),
    namespace: z.string().nullable().optional(),
    syncMode: z.enum(['full_refresh', 'incremental']),
    destinationSyncMode: z.enum(['append', 'overwrite', 'append_dedup']).default('append'),
    cursorField: z
      .array(z.string())
      .optional()
      .describe('For incremental, unless the source defines the cursor.'),
    primaryKey: z
      .array(z.array(z.string()))
      .optional()
      .describe('For append_dedup, unless the source defines the key.'),
  }),
  'One selected stream of the discovered catalog.',
);

const DiscoveredCatalog = z
  .looseObject({ streams: z.array(z.record(z.string(), z.unknown())) })
  .describe('The `CATALOG` a discover answered (the `result` output of a `discover` connector task).');

export const ConnectionBody = named(
  'ConnectionBody',
  z.strictObject({
    source: ConnectorEndpoint,
    destination: ConnectorEndpoint,
    catalog: DiscoveredCatalog.optional().describe(
      'The discovered catalog the streams are selected from. Required on POST; on PUT, without it the streams are selected from the streams the connection already has.',
    ),
    streams: z.array(StreamSelectionBody).min(1),
    schedule: z.string().describe('Cron, 5 fields (or 6 with seconds first), in UTC.'),
    executor: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('An executor block (docs/flow-file.md) for the sync task.'),
    retry: z
      .object({ max_attempts: z.int().min(1), backoff: z.union([z.string(), z.number()]).optional() })
      .optional()
      .describe('Attempts of a sync; each one starts from the last committed state.'),
    timeout: z.union([z.string(), z.number()]).optional().describe('Per attempt, a duration such as 2h.'),
  }),
  'A connection as written: the flow the connections API stores from it is docs/api.md#connections.',
);

export const ConnectionResetBody = named(
  'ConnectionReset',
  z.strictObject({
    streams: z
      .array(z.strictObject({ name: z.string().min(1), namespace: z.string().nullable().optional() }))
      .min(1)
      .optional()
      .describe('The streams to reset; without it, the whole state.'),
  }),
);

const Stream = z.object({ name: z.string(), namespace: z.string().nullable() });

export const CommittedStateEntry = named(
  'CommittedState',
  z.object({
    stateType: z.enum(['STREAM', 'GLOBAL', 'LEGACY']),
    stream: Stream.nullable().describe('The stream of a STREAM state; null for GLOBAL and LEGACY.'),
    state: z
      .unknown()
      .describe('The source\u2019s state object, as it sent it and the destination acknowledged it.'),
    executionId: z.uuid(),
    taskRunId: z.uuid(),
    updatedAt: Timestamp,
  }),
);

export const LedgerEntry = named(
  'LedgerEntry',
  z.object({
    id: z.string().describe('Ledger order: newer commits have larger ids.'),
    executionId: z.uuid(),
    taskRunId: z.uuid(),
    attempt: z.number().int(),
    sequence: z.number().int().describe('The source\u2019s state number in its attempt.'),
    stateType: z.enum(['STREAM', 'GLOBAL', 'LEGACY']),
    stream: Stream.nullable(),
    records: z.number().int(),
    bytes: z.number().int(),
    streams: z.record(z.string(), z.object({ records: z.number(), bytes: z.number() })),
    committedAt: Timestamp,
  }),
  'One committed state: what it made durable, in all and per stream.',
);

export const LedgerPage = named(
  'LedgerPage',
  z.object({ entries: z.array(LedgerEntry), nextCursor: NextCursor }),
  'The commit ledger, newest first. `nextCursor` continues on GET \u2026/connections/{name}/ledger.',
);

const Counts = z.number().int().nullable();

export const SyncAttempt = named(
  'SyncAttempt',
  z.object({
    taskRunId: z.uuid(),
    attempt: z.number().int(),
    state: z.string(),
    error: z.string().nullable(),
    recordsEmitted: Counts.describe(
      'What the source sent (the task run\u2019s metrics); null when not reported.',
    ),
    bytesEmitted: Counts,
    recordsCommitted: z.number().int().describe('What the destination acknowledged (the ledger).'),
    bytesCommitted: z.number().int(),
    commits: z.number().int().describe('Committed states of the attempt.'),
    startedAt: Timestamp.nullable(),
    endedAt: Timestamp.nullable(),
  }),
);

export const SyncRun = named(
  'SyncRun',
  z.object({
    executionId: z.uuid(),
    state: z.string(),
    trigger: z.string(),
    createdAt: Timestamp,
    endedAt: Timestamp.nullable(),
    attempts: z.array(SyncAttempt),
  }),
  'One execution of the connection\u2019s flow and the attempts of its sync task.',
);

const connectionFields = {
  namespace: z.string(),
  name: z.string().describe('Also the id of its flow.'),
  source: ConnectorEndpoint,
  destination: ConnectorEndpoint,
  streams: z.array(StreamSelectionBody),
  catalog: z
    .record(z.string(), z.unknown())
    .describe(
      'The configured catalog the sync reads and writes (the selected streams of the discovered one).',
    ),
  schedule: z.string(),
  executor: z.record(z.string(), z.unknown()).optional(),
  retry: z.record(z.string(), z.unknown()).optional(),
  timeout: z.union([z.string(), z.number()]).optional(),
  updatedAt: Timestamp,
};

export const ConnectionStored = named(
  'ConnectionStored',
  z.object(connectionFields),
  'The connection as stored (the answer of POST and PUT).',
);

export const Connection = named(
  'Connection',
  z.object({
    ...connectionFields,
    state: z
      .array(CommittedStateEntry)
      .describe('The committed state: one entry per stream, or one for all.'),
    syncs: z.array(SyncRun).describe('The newest executions of the connection, newest first.'),
    ledger: LedgerPage,
  }),
);

export const ConnectionList = named(
  'ConnectionList',
  z.object({
    connections: z.array(
      z.object({
        name: z.string(),
        schedule: z.string().nullable(),
        streams: z.number().int().describe('How many streams are selected.'),
        updatedAt: Timestamp,
      }),
    ),
    nextCursor: NextCursor,
  }),
  'The connections of a namespace, by name.',
);

export const ConnectionResetDone = named(
  'ConnectionResetDone',
  z.object({
    reset: z.number().int().describe('State entries removed or changed.'),
    state: z.array(CommittedStateEntry).describe('The committed state left.'),
  }),
);
