import { join } from 'node:path';
import { Client } from 'pg';
import type { ApiClient, ExecutionView, TaskRunView } from '@sluice/testing';
import { ended, useStandaloneServer, type StandaloneFixture } from './standalone';

/** Helpers of the sync tests: the example connectors, a flow with one sync task, the destination's tables. */

const EXAMPLES = join(__dirname, '..', '..', '..', 'examples', 'connectors');
export const NODE = process.execPath;
export const SOURCE = [NODE, join(EXAMPLES, 'source-sequence', 'main.cjs')];
export const DESTINATION_PG = [NODE, join(EXAMPLES, 'destination-postgres', 'main.cjs')];
export const DESTINATION_NULL = [NODE, join(EXAMPLES, 'destination-null', 'main.cjs')];
export const NAMESPACE = 'syncs';

export type SyncRunView = TaskRunView & { error: string | null; exitCode: number | null };

/** A configured catalog of the example source's streams: incremental on `id`, deduplicated by it. */
export function catalogOf(streams: string[]) {
  return {
    streams: streams.map((name) => ({
      stream: {
        name,
        json_schema: { type: 'object', properties: { id: { type: 'integer' }, payload: { type: 'string' } } },
        supported_sync_modes: ['full_refresh', 'incremental'],
        source_defined_cursor: true,
        default_cursor_field: ['id'],
        source_defined_primary_key: [['id']],
      },
      sync_mode: 'incremental',
      destination_sync_mode: 'append_dedup',
    })),
  };
}

export interface SyncFlow {
  source?: { command: string[]; config: Record<string, unknown> };
  destination: { command: string[]; config: Record<string, unknown> };
  streams?: string[];
  maxAttempts?: number;
  timeout?: string;
}

/** The flow's YAML (JSON is YAML): one sync task `sync`. */
export function syncFlowYaml(flow: SyncFlow): string {
  const streams = flow.streams ?? ['users'];
  const task = {
    id: 'sync',
    type: 'sync',
    retry: { max_attempts: flow.maxAttempts ?? 1 },
    ...(flow.timeout ? { timeout: flow.timeout } : {}),
    source: flow.source ?? { command: SOURCE, config: { streams, records_per_stream: 100 } },
    destination: flow.destination,
    catalog: catalogOf(streams),
  };
  return JSON.stringify({ tasks: [task] });
}

export async function putSyncFlow(api: ApiClient, name: string, flow: SyncFlow): Promise<void> {
  const put = await api.putFlow(NAMESPACE, name, syncFlowYaml(flow));
  if (put.status !== 200) throw new Error(`put flow: ${put.status} ${JSON.stringify(put.body)}`);
}

export async function runToEnd(api: ApiClient, name: string, timeoutMs = 120_000): Promise<ExecutionView> {
  return api.waitFor(await api.run(NAMESPACE, name), ended, timeoutMs);
}

/** A client on the test database, for the destination's tables and the ledger. */
export async function sql(url: string): Promise<Client> {
  const c = new Client({ connectionString: url });
  // The database is dropped at the end of the file, maybe before this client ends.
  c.on('error', () => {});
  await c.connect();
  return c;
}

/**
 * The file's standalone server (useStandaloneServer) and `pg`, a client on its
 * database for the destination's tables and the ledger, from beforeAll on.
 */
export function useSyncServer(): StandaloneFixture & { readonly pg: Client } {
  const fixture = useStandaloneServer();
  let pg: Client | undefined;
  beforeAll(async () => {
    pg = await sql(fixture.db.url);
  });
  afterAll(async () => {
    await pg?.end();
  });
  return Object.defineProperty(fixture, 'pg', {
    get: () => {
      if (!pg) throw new Error('the database client is not connected yet (use it inside a test)');
      return pg;
    },
  }) as StandaloneFixture & { readonly pg: Client };
}

/** The destination's rows of a stream: ids in order. */
export async function tableIds(db: Client, schema: string, table: string): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `SELECT (data->>'id')::int AS id FROM "${schema}"."${table}" ORDER BY 1`,
  );
  return rows.map((r) => r.id);
}

/** Every delivery the destination received, per write run in order: [run, id]. */
export async function deliveries(
  db: Client,
  schema: string,
  prefix: string,
): Promise<Array<[number, number]>> {
  const { rows } = await db.query<{ run_id: string; record_id: number }>(
    `SELECT run_id, (pk::jsonb->>0)::int AS record_id FROM "${schema}"."${prefix}_sluice_deliveries" ORDER BY id`,
  );
  return rows.map((r) => [Number(r.run_id), r.record_id]);
}

/** The committed cursor of a stream of the flow's sync task, or null. */
export async function committedCursor(db: Client, flow: string, stream: string): Promise<number | null> {
  const { rows } = await db.query<{ state: string }>(
    `SELECT state FROM sync_states WHERE namespace = $1 AND flow_id = $2 AND task_id = 'sync' AND stream_name = $3`,
    [NAMESPACE, flow, stream],
  );
  if (!rows[0]) return null;
  return (JSON.parse(rows[0].state) as { stream: { stream_state: { cursor: number } } }).stream.stream_state
    .cursor;
}

export async function ledger(db: Client, flow: string) {
  const { rows } = await db.query<{
    attempt: number;
    sequence: number;
    records: string;
    stream_name: string;
  }>(
    `SELECT attempt, sequence, records, stream_name FROM sync_commits
     WHERE namespace = $1 AND flow_id = $2 AND task_id = 'sync' ORDER BY id`,
    [NAMESPACE, flow],
  );
  return rows.map((r) => ({
    attempt: r.attempt,
    sequence: r.sequence,
    records: Number(r.records),
    stream: r.stream_name,
  }));
}

export const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The outputs a task run reported (the public API shows those of succeeded runs only). */
export async function runOutputs(db: Client, taskRunId: string): Promise<Record<string, string>> {
  const { rows } = await db.query<{ key: string; value: string }>(
    'SELECT key, value FROM task_run_outputs WHERE task_run_id = $1',
    [taskRunId],
  );
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}
