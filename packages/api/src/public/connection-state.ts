import {
  committedTotalsOfTaskRuns,
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

/** Metric names the sync orchestrator reports (cumulative per attempt), read as emitted counts. */
export const EMITTED_METRICS = { records: 'records_emitted', bytes: 'bytes_emitted' } as const;

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

/** The newest value of a cumulative metric (all tags together: the orchestrator reports totals untagged). */
function latest(metrics: MetricRow[], name: string): number | null {
  let value: number | null = null;
  for (const m of metrics) if (m.name === name && Object.keys(m.tags).length === 0) value = m.value;
  return value;
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
          const committed = totals.get(r.id) ?? { commits: 0, records: 0, bytes: 0 };
          return {
            taskRunId: r.id,
            attempt: r.attempt,
            state: r.state,
            error: r.error,
            recordsEmitted: latest(metrics, EMITTED_METRICS.records),
            bytesEmitted: latest(metrics, EMITTED_METRICS.bytes),
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
