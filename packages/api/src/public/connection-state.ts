import {
  committedTotalsOfTaskRuns,
  getOutputsOfExecution,
  getSyncState,
  listExecutions,
  listMetrics,
  listSyncCommits,
  listTaskRunsOfExecution,
  type MetricRow,
  type SyncCommitEntry,
  type SyncKey,
  type SyncStateEntry,
} from '@sluice/store';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { SYNC_TASK_ID } from './connection-flow';
import { encodeCursor, nameAfter } from './paging';

/*
 * What GET …/connections/{name} shows beside the connection: its committed
 * state, its last syncs and its commit ledger (docs/api.md#connections).
 */

/** How many executions "the last syncs" are, and the ledger page GET embeds. */
export const LAST_SYNCS = 10;
export const EMBEDDED_LEDGER_PAGE = 20;

/**
 * What a sync attempt says it emitted: the runner reports running totals as
 * metrics while it syncs, and the final totals as outputs when it succeeds.
 */
export const EMITTED_METRICS = { records: 'sync_records_emitted', bytes: 'sync_bytes_emitted' } as const;
export const EMITTED_OUTPUTS = { records: 'records_emitted', bytes: 'bytes_emitted' } as const;

export function stateViews(entries: SyncStateEntry[]) {
  return entries.map((e) => ({
    stateType: e.stateType,
    stream: e.stream,
    state: parseState(e.state),
    executionId: e.executionId,
    taskRunId: e.taskRunId,
    updatedAt: e.updatedAt,
  }));
}

function parseState(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export async function committedState(ctx: PublicApiContext, key: SyncKey) {
  return stateViews(await getSyncState(ctx.store, key));
}

const ledgerView = (e: SyncCommitEntry) => ({ ...e });

/** The ledger id a page continues before; a cursor of another list is 400 invalid_cursor. */
function ledgerBefore(cursor: string | undefined): string | undefined {
  let id: string | undefined;
  try {
    id = nameAfter(cursor);
  } catch {
    id = '';
  }
  if (id !== undefined && !/^\d{1,19}$/.test(id))
    throw new HttpError(
      400,
      'invalid_cursor',
      'cursor is not one this list returned; start without a cursor',
    );
  return id;
}

export async function ledgerPage(ctx: PublicApiContext, key: SyncKey, limit: number, cursor?: string) {
  const rows = await listSyncCommits(ctx.store, key, { limit: limit + 1, before: ledgerBefore(cursor) });
  const entries = rows.slice(0, limit);
  const last = entries.at(-1);
  return {
    entries: entries.map(ledgerView),
    nextCursor: rows.length > limit && last ? encodeCursor([last.id]) : null,
  };
}

/** The newest value of a running-total metric (in the order received). */
function latest(metrics: MetricRow[], name: string): number | null {
  let value: number | null = null;
  for (const m of metrics) if (m.name === name) value = m.value;
  return value;
}

function outputCount(outputs: Record<string, string> | undefined, key: string): number | null {
  const value = outputs?.[key];
  if (value === undefined || !/^\d+$/.test(value)) return null;
  return Number(value);
}

/** The last executions of the connection, each with its sync attempts: emitted (metrics) vs committed (ledger). */
export async function lastSyncs(ctx: PublicApiContext, key: SyncKey) {
  const executions = await listExecutions(
    ctx.store,
    { workspace: key.workspace, namespace: key.namespace, flowId: key.flowId },
    { limit: LAST_SYNCS },
  );
  const runsOf = await Promise.all(
    executions.map(async (e) =>
      (await listTaskRunsOfExecution(ctx.store, e.id)).filter((r) => r.taskId === SYNC_TASK_ID),
    ),
  );
  // Of the attempt that succeeded (at most one per execution).
  const finalOf = await Promise.all(
    executions.map(async (e) => (await getOutputsOfExecution(ctx.store, e.id))[SYNC_TASK_ID]),
  );
  const totals = await committedTotalsOfTaskRuns(
    ctx.store,
    runsOf.flat().map((r) => r.id),
  );
  return Promise.all(
    executions.map(async (e, i) => ({
      executionId: e.id,
      state: e.state,
      trigger: e.trigger,
      createdAt: e.createdAt,
      endedAt: e.endedAt,
      attempts: await Promise.all(
        (runsOf[i] ?? []).map(async (r) => {
          const metrics = await listMetrics(ctx.store, r.id);
          const outputs = r.state === 'SUCCEEDED' ? finalOf[i] : undefined;
          const committed = totals.get(r.id) ?? { commits: 0, records: 0, bytes: 0 };
          return {
            taskRunId: r.id,
            attempt: r.attempt,
            state: r.state,
            error: r.error,
            recordsEmitted:
              outputCount(outputs, EMITTED_OUTPUTS.records) ?? latest(metrics, EMITTED_METRICS.records),
            bytesEmitted:
              outputCount(outputs, EMITTED_OUTPUTS.bytes) ?? latest(metrics, EMITTED_METRICS.bytes),
            recordsCommitted: committed.records,
            bytesCommitted: committed.bytes,
            commits: committed.commits,
            startedAt: r.startedAt,
            endedAt: r.endedAt,
          };
        }),
      ),
    })),
  );
}

/** 409 while a sync of the connection is queued or running: it would commit state after the change. */
export function busyError(what: string): HttpError {
  return new HttpError(
    409,
    'conflict',
    `${what}: a sync of this connection is queued or running; cancel it or wait for it to end`,
  );
}
