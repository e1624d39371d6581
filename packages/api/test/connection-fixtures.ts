import request from 'supertest';
import { runnerPaths } from '@sluice/protocol';
import { createRunToken } from '@sluice/auth';
import { claimTaskRuns, commitSyncState } from '@sluice/store';
import { JWT_SECRET, type ApiHarness } from './harness';
import type { Caller } from './workspaces';

/** A discovered catalog as a discover task answers it: `users` (no namespace) and `shop.orders`. */
export const CATALOG = {
  streams: [
    {
      name: 'users',
      json_schema: {
        type: 'object',
        properties: { id: { type: 'integer' }, updated_at: { type: 'string' } },
      },
      supported_sync_modes: ['full_refresh', 'incremental'],
      source_defined_primary_key: [['id']],
    },
    {
      name: 'orders',
      namespace: 'shop',
      json_schema: { type: 'object', properties: { seq: { type: 'integer' } } },
      supported_sync_modes: ['full_refresh', 'incremental'],
      source_defined_cursor: true,
      default_cursor_field: ['seq'],
    },
  ],
};

export const USERS = {
  name: 'users',
  syncMode: 'incremental',
  cursorField: ['updated_at'],
  destinationSyncMode: 'append_dedup',
};
export const ORDERS = { name: 'orders', namespace: 'shop', syncMode: 'incremental' };

export const SYNC_POOL = 'connections';

/** A connection body on the process executor whose source config refers to the secret `db-password`. */
export function connectionBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    source: {
      command: ['node', 'source.js'],
      config: { records_per_stream: 10, password: { secret: 'db-password' } },
    },
    destination: { command: ['node', 'destination.js'], config: { table_prefix: 'raw_' } },
    catalog: CATALOG,
    streams: [USERS, ORDERS],
    schedule: '*/15 * * * *',
    // A pool of their own: claiming a sync never takes another test's task run.
    executor: { type: 'process', pool: SYNC_POOL },
    ...overrides,
  };
}

export const connectionPath = (ns: string, name: string, rest = '') =>
  `/api/v1/namespaces/${ns}/connections/${name}${rest}`;

export const postConnection = (who: Caller, ns: string, name: string, body: unknown) =>
  who.post(connectionPath(ns, name)).send(body as object);

export const putConnection = (who: Caller, ns: string, name: string, body: unknown) =>
  who.put(connectionPath(ns, name)).send(body as object);

const streamState = (name: string, namespace: string | null, cursor: number) =>
  JSON.stringify({
    type: 'STREAM',
    stream: {
      stream_descriptor: namespace ? { name, namespace } : { name },
      stream_state: { cursor },
    },
  });

export interface SyncRun {
  executionId: string;
  taskRunId: string;
  fence: number;
  token: string;
}

/** Starts an execution of the connection and holds its sync task run as a runner would (RUNNING). */
export async function startSync(h: ApiHarness, who: Caller, ns: string, name: string): Promise<SyncRun> {
  const created = await who.post(`/api/v1/namespaces/${ns}/flows/${name}/executions`);
  expect(created.status).toBe(201);
  const [row] = await claimTaskRuns(h.pool, {
    ownerId: 'test-instance',
    executorTypes: ['process'],
    pools: [SYNC_POOL],
    limit: 1,
  });
  if (!row) throw new Error('expected the sync task run to be claimed');
  const claimed = {
    row,
    token: await createRunToken(JWT_SECRET, { taskRunId: row.id, fence: row.fence }, row.timeoutMs),
  };
  const started = await request(h.internalApp)
    .post(runnerPaths.started(claimed.row.id))
    .set('Authorization', `Bearer ${claimed.token}`)
    .send({ fence: claimed.row.fence });
  expect(started.status).toBe(200);
  return {
    executionId: String(created.body.id),
    taskRunId: claimed.row.id,
    fence: claimed.row.fence,
    token: claimed.token,
  };
}

/** Commits a STREAM state of the run through the store, as the runner API does once the destination echoed it. */
export async function commitStream(
  h: ApiHarness,
  run: SyncRun,
  sequence: number,
  stream: { name: string; namespace: string | null },
  cursor: number,
  records: number,
): Promise<void> {
  const key = stream.namespace ? `${stream.namespace}.${stream.name}` : stream.name;
  const written = await commitSyncState(h.pool, {
    taskRunId: run.taskRunId,
    fence: run.fence,
    sequence,
    stateType: 'STREAM',
    stream,
    state: streamState(stream.name, stream.namespace, cursor),
    streams: { [key]: { records, bytes: records * 100 } },
  });
  expect(written).toBe(true);
}

const asRunner = (run: SyncRun, r: request.Test) => r.set('Authorization', `Bearer ${run.token}`);

/** Reports running totals of what the source emitted, as the runner's progress metrics. */
export async function reportEmitted(h: ApiHarness, run: SyncRun, emitted: number): Promise<void> {
  const metrics = await asRunner(run, request(h.internalApp).post(runnerPaths.metrics(run.taskRunId))).send({
    fence: run.fence,
    metrics: [
      { name: 'sync_records_emitted', value: emitted, tags: {} },
      { name: 'sync_bytes_emitted', value: emitted * 100, tags: {} },
    ],
  });
  expect(metrics.status).toBe(200);
}

/** Ends the run with its final totals as outputs and exit code 0; the execution then ends. */
export async function finishSync(h: ApiHarness, run: SyncRun, emitted: number): Promise<void> {
  const runner = (r: request.Test) => asRunner(run, r);
  const outputs = await runner(request(h.internalApp).post(runnerPaths.outputs(run.taskRunId))).send({
    fence: run.fence,
    outputs: { records_emitted: String(emitted), bytes_emitted: String(emitted * 100) },
  });
  expect(outputs.status).toBe(200);
  const result = await runner(request(h.internalApp).post(runnerPaths.result(run.taskRunId))).send({
    fence: run.fence,
    exitCode: 0,
  });
  expect(result.status).toBe(200);
  await h.engine.processPendingEvents();
}
