import { Router, type Request, type Response } from 'express';
import {
  deleteFlow,
  getFlow,
  hasActiveExecution,
  listConnectionFlows,
  resetSyncState,
  upsertFlow,
  type FlowRow,
  type SyncKey,
} from '@sluice/store';
import { jsonBody } from '../body-limits';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { PageQuery } from '@sluice/api-schemas';
import { ConnectionResetBody } from '@sluice/api-schemas';
import {
  buildConnectionFlow,
  configuredCatalogOf,
  connectionOfFlow,
  SYNC_TASK_ID,
  syncTaskOf,
} from './connection-flow';
import { busyError, committedState, EMBEDDED_LEDGER_PAGE, lastSyncs, ledgerPage } from './connection-state';
import { namespaceConfig } from './flows';
import { callerNamespace, checkName } from './names';
import { nameAfter, pageOf, parseQuery } from './paging';

/** A connection body holds a discovered catalog, which for a big database is large; the flow it becomes is stored whole. */
export const CONNECTION_BODY_LIMIT = 4 * 1024 * 1024;
const RESET_BODY_LIMIT = 64 * 1024;

interface CallerConnection {
  key: SyncKey;
  row: FlowRow;
}

function keyOf(req: Request, res: Response): SyncKey {
  const ns = callerNamespace(req, res);
  return { ...ns, flowId: checkName('connection', String(req.params.name)), taskId: SYNC_TASK_ID };
}

const notFound = (key: SyncKey) =>
  new HttpError(404, 'not_found', `connection ${key.namespace}/${key.flowId} not found`);

/** The caller's connection of that name: a flow of its workspace marked as one, else 404 (as missing). */
async function callerConnection(
  ctx: PublicApiContext,
  req: Request,
  res: Response,
): Promise<CallerConnection> {
  const key = keyOf(req, res);
  const row = await getFlow(ctx.store, key, key.flowId);
  if (!row || !syncTaskOf(row.definition)) throw notFound(key);
  return { key, row };
}

function storedView(key: SyncKey, row: FlowRow) {
  const view = connectionOfFlow(key, row);
  if (!view) throw notFound(key);
  return view;
}

function requireJson(body: unknown): unknown {
  if (body === undefined)
    throw new HttpError(
      400,
      'invalid_request',
      'the body must be the connection as JSON (Content-Type: application/json)',
    );
  return body;
}

/**
 * Validates the body as the flow it becomes and stores that flow; a body
 * with any problem is a 422 listing them all, and nothing is stored.
 */
async function storeConnection(
  ctx: PublicApiContext,
  key: SyncKey,
  body: unknown,
  res: Response,
  replacing?: FlowRow,
): Promise<FlowRow | null> {
  const known = replacing ? syncTaskOf(replacing.definition) : null;
  const built = buildConnectionFlow(
    requireJson(body),
    { namespace: key.namespace, name: key.flowId },
    (await namespaceConfig(ctx, key)) ?? undefined,
    known ? configuredCatalogOf(known) : undefined,
  );
  if (!built.ok) {
    res.status(422).json({ errors: built.errors });
    return null;
  }
  return upsertFlow(ctx.store, {
    workspace: key.workspace,
    namespace: key.namespace,
    flowId: key.flowId,
    source: built.yaml,
    definition: built.flow,
    schedule: built.flow.schedule ?? null,
  });
}

/**
 * Connections (docs/api.md#connections): a flow with a schedule and one
 * `sync` task, written and read as source, destination, streams and
 * schedule, with its committed state, last syncs and commit ledger.
 */
export function connectionRoutes(ctx: PublicApiContext): Router {
  const router = Router();
  const json = jsonBody(CONNECTION_BODY_LIMIT);

  router.post('/namespaces/:ns/connections/:name', json, async (req, res) => {
    const key = keyOf(req, res);
    if (await getFlow(ctx.store, key, key.flowId))
      throw new HttpError(
        409,
        'conflict',
        `${key.namespace}/${key.flowId} exists (a connection or flow); PUT replaces a connection`,
      );
    const row = await storeConnection(ctx, key, req.body, res);
    if (!row) return;
    // A new connection reads from scratch, whatever a flow of that name once committed.
    await resetSyncState(ctx.store, key);
    ctx.log.info('connection stored', {
      workspace: key.workspace,
      namespace: key.namespace,
      name: key.flowId,
    });
    res.status(201).json(storedView(key, row));
  });

  router.put('/namespaces/:ns/connections/:name', json, async (req, res) => {
    const { key, row: before } = await callerConnection(ctx, req, res);
    const row = await storeConnection(ctx, key, req.body, res, before);
    if (!row) return;
    ctx.log.info('connection replaced', {
      workspace: key.workspace,
      namespace: key.namespace,
      name: key.flowId,
    });
    res.json(storedView(key, row));
  });

  router.get('/namespaces/:ns/connections', async (req, res) => {
    const ns = callerNamespace(req, res);
    const { limit, cursor } = parseQuery(PageQuery, req);
    const rows = await listConnectionFlows(ctx.store, ns, { limit: limit + 1, after: nameAfter(cursor) });
    const page = pageOf(rows, limit, (r) => [r.flowId]);
    res.json({
      connections: page.items.map((r) => {
        const task = syncTaskOf(r.definition);
        return {
          name: r.flowId,
          schedule: r.schedule,
          streams: task ? configuredCatalogOf(task).streams.length : 0,
          updatedAt: r.updatedAt,
        };
      }),
      nextCursor: page.nextCursor,
    });
  });

  router.get('/namespaces/:ns/connections/:name', async (req, res) => {
    const { key, row } = await callerConnection(ctx, req, res);
    const [state, syncs, ledger] = await Promise.all([
      committedState(ctx, key),
      lastSyncs(ctx, key),
      ledgerPage(ctx, key, EMBEDDED_LEDGER_PAGE),
    ]);
    res.json({ ...storedView(key, row), state, syncs, ledger });
  });

  router.get('/namespaces/:ns/connections/:name/ledger', async (req, res) => {
    const { key } = await callerConnection(ctx, req, res);
    const { limit, cursor } = parseQuery(PageQuery, req);
    res.json(await ledgerPage(ctx, key, limit, cursor));
  });

  router.post('/namespaces/:ns/connections/:name/reset', jsonBody(RESET_BODY_LIMIT), async (req, res) => {
    const { key } = await callerConnection(ctx, req, res);
    const body = ConnectionResetBody.parse(req.body ?? {});
    if (await hasActiveExecution(ctx.store, key, key.flowId)) throw busyError('reset refused');
    const streams = body.streams?.map((s) => ({ name: s.name, namespace: s.namespace ?? null }));
    const reset = await resetSyncState(ctx.store, key, streams);
    ctx.log.info('connection state reset', {
      workspace: key.workspace,
      namespace: key.namespace,
      name: key.flowId,
      streams: streams?.length ?? 'all',
    });
    res.json({ reset, state: await committedState(ctx, key) });
  });

  // The flow goes, and with it the committed state; the ledger stays with its executions.
  router.delete('/namespaces/:ns/connections/:name', async (req, res) => {
    const { key } = await callerConnection(ctx, req, res);
    if (await hasActiveExecution(ctx.store, key, key.flowId)) throw busyError('delete refused');
    await deleteFlow(ctx.store, key, key.flowId);
    await resetSyncState(ctx.store, key);
    ctx.log.info('connection deleted', {
      workspace: key.workspace,
      namespace: key.namespace,
      name: key.flowId,
    });
    res.status(204).end();
  });

  return router;
}
