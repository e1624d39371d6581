import express, { Router } from 'express';
import { parseNamespaceConfig, validateFlowFile, type NamespaceConfig } from '@sluice/flows';
import {
  connectionFlowIds,
  deleteFlow,
  getFlow,
  getNamespaceFile,
  listFlows,
  upsertFlow,
  type NamespaceKey,
} from '@sluice/store';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { PageQuery } from '@sluice/api-schemas';
import { callerNamespace, checkName } from './names';
import { nameAfter, pageOf, parseQuery } from './paging';

const yamlBody = express.text({ type: () => true, limit: '1mb' });

export async function namespaceConfig(
  ctx: PublicApiContext,
  ns: NamespaceKey,
): Promise<NamespaceConfig | null> {
  const file = await getNamespaceFile(ctx.store, ns, 'namespace.yaml');
  if (!file) return null;
  const parsed = parseNamespaceConfig(file.toString('utf8'));
  return parsed.ok ? parsed.config : null;
}

/** A connection's flow is written only by the connections API, which keeps its shape (docs/api.md#connections). */
function isConnectionFlow(definition: unknown): boolean {
  return (definition as { connection?: unknown } | null)?.connection === true;
}

const connectionConflict = (ns: NamespaceKey, flowId: string, what: string) =>
  new HttpError(
    409,
    'conflict',
    `flow ${ns.namespace}/${flowId} is a connection; ${what} it through /api/v1/namespaces/${ns.namespace}/connections/${flowId}`,
  );

function flowView(row: {
  namespace: string;
  flowId: string;
  source: string;
  definition: unknown;
  updatedAt: Date;
}) {
  return {
    namespace: row.namespace,
    id: row.flowId,
    source: row.source,
    definition: row.definition,
    updatedAt: row.updatedAt,
  };
}

export function flowRoutes(ctx: PublicApiContext): Router {
  const router = Router();

  router.put('/namespaces/:ns/flows/:flow', yamlBody, async (req, res) => {
    const ns = callerNamespace(req, res);
    const { namespace } = ns;
    const flowId = checkName('flow', String(req.params.flow));
    if (typeof req.body !== 'string' || req.body.trim() === '') {
      throw new HttpError(
        400,
        'invalid_request',
        'the body must be the flow YAML (Content-Type: application/yaml)',
      );
    }
    // One pass reports every problem: shape, graph, templates and the merged executors.
    const parsed = validateFlowFile(
      req.body,
      { namespace, flowId },
      (await namespaceConfig(ctx, ns)) ?? undefined,
    );
    if (!parsed.ok) return void res.status(422).json({ errors: parsed.errors });
    if (parsed.flow.connection === true)
      return void res.status(422).json({
        errors: [
          {
            code: 'invalid_value',
            path: 'connection',
            message: `a connection's flow is written through /api/v1/namespaces/${namespace}/connections/${flowId}`,
          },
        ],
      });
    const existing = await getFlow(ctx.store, ns, flowId);
    if (existing && isConnectionFlow(existing.definition)) throw connectionConflict(ns, flowId, 'change');
    const row = await upsertFlow(ctx.store, {
      ...ns,
      flowId,
      source: req.body,
      definition: parsed.flow,
      schedule: parsed.flow.schedule ?? null,
    });
    ctx.log.info('flow stored', { workspace: ns.workspace, namespace, flowId });
    res.json(flowView(row));
  });

  router.get('/namespaces/:ns/flows', async (req, res) => {
    const ns = callerNamespace(req, res);
    const { limit, cursor } = parseQuery(PageQuery, req);
    const rows = await listFlows(ctx.store, ns, { limit: limit + 1, after: nameAfter(cursor) });
    const page = pageOf(rows, limit, (r) => [r.flowId]);
    const connections = await connectionFlowIds(
      ctx.store,
      ns,
      page.items.map((r) => r.flowId),
    );
    res.json({
      flows: page.items.map((r) => ({
        id: r.flowId,
        schedule: r.schedule,
        connection: connections.has(r.flowId),
        updatedAt: r.updatedAt,
      })),
      nextCursor: page.nextCursor,
    });
  });

  router.get('/namespaces/:ns/flows/:flow', async (req, res) => {
    const ns = callerNamespace(req, res);
    const flowId = checkName('flow', String(req.params.flow));
    const row = await getFlow(ctx.store, ns, flowId);
    if (!row) throw new HttpError(404, 'not_found', `flow ${ns.namespace}/${flowId} not found`);
    res.json(flowView(row));
  });

  router.delete('/namespaces/:ns/flows/:flow', async (req, res) => {
    const ns = callerNamespace(req, res);
    const flowId = checkName('flow', String(req.params.flow));
    const existing = await getFlow(ctx.store, ns, flowId);
    if (existing && isConnectionFlow(existing.definition)) throw connectionConflict(ns, flowId, 'delete');
    if (!(await deleteFlow(ctx.store, ns, flowId)))
      throw new HttpError(404, 'not_found', `flow ${ns.namespace}/${flowId} not found`);
    res.status(204).end();
  });

  return router;
}
