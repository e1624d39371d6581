import express, { Router } from 'express';
import { parseNamespaceConfig, validateFlowFile, type NamespaceConfig } from '@sluice/flows';
import { deleteFlow, getFlow, getNamespaceFile, listFlows, upsertFlow } from '@sluice/store';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { checkName } from './names';

const yamlBody = express.text({ type: () => true, limit: '1mb' });

async function namespaceConfig(ctx: PublicApiContext, namespace: string): Promise<NamespaceConfig | null> {
  const file = await getNamespaceFile(ctx.store, namespace, 'namespace.yaml');
  if (!file) return null;
  const parsed = parseNamespaceConfig(file.toString('utf8'));
  return parsed.ok ? parsed.config : null;
}

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
    const namespace = checkName('namespace', String(req.params.ns));
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
      (await namespaceConfig(ctx, namespace)) ?? undefined,
    );
    if (!parsed.ok) return void res.status(422).json({ errors: parsed.errors });
    const row = await upsertFlow(ctx.store, {
      namespace,
      flowId,
      source: req.body,
      definition: parsed.flow,
      schedule: parsed.flow.schedule ?? null,
    });
    ctx.log.info('flow stored', { namespace, flowId });
    res.json(flowView(row));
  });

  router.get('/namespaces/:ns/flows', async (req, res) => {
    const namespace = checkName('namespace', String(req.params.ns));
    const rows = await listFlows(ctx.store, namespace);
    res.json({ flows: rows.map((r) => ({ id: r.flowId, schedule: r.schedule, updatedAt: r.updatedAt })) });
  });

  router.get('/namespaces/:ns/flows/:flow', async (req, res) => {
    const namespace = checkName('namespace', String(req.params.ns));
    const flowId = checkName('flow', String(req.params.flow));
    const row = await getFlow(ctx.store, namespace, flowId);
    if (!row) throw new HttpError(404, 'not_found', `flow ${namespace}/${flowId} not found`);
    res.json(flowView(row));
  });

  router.delete('/namespaces/:ns/flows/:flow', async (req, res) => {
    const namespace = checkName('namespace', String(req.params.ns));
    const flowId = checkName('flow', String(req.params.flow));
    if (!(await deleteFlow(ctx.store, namespace, flowId)))
      throw new HttpError(404, 'not_found', `flow ${namespace}/${flowId} not found`);
    res.status(204).end();
  });

  return router;
}
