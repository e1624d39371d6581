import express, { Router } from 'express';
import { parseNamespaceConfig, validateFlowFile, type NamespaceConfig } from '@sluice/flows';
import { getNamespaceFile } from '@sluice/store';
import type { ValidationIssue } from '@sluice/protocol';
import { NamespaceValidationRequest } from '@sluice/api-schemas';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { callerNamespace } from './names';

/** A folder of flows is at most this large as JSON (a flow PUT takes 1 MiB each). */
const jsonBody = express.json({ limit: '10mb' });

/**
 * POST /namespaces/:ns/validate: a namespace folder checked with the rules of
 * the flow and file PUTs, storing nothing. `sluice apply` calls it first, so a
 * folder with one broken flow changes nothing (docs/cli.md#apply). The flows are
 * checked against the namespace.yaml of the request when it has one, since
 * apply stores that one before them.
 */
export function validateRoutes(ctx: PublicApiContext): Router {
  const router = Router();

  router.post('/namespaces/:ns/validate', jsonBody, async (req, res) => {
    const ns = callerNamespace(req, res);
    const body = NamespaceValidationRequest.safeParse(req.body);
    if (!body.success) {
      const message = body.error.issues
        .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
        .join('; ');
      throw new HttpError(400, 'invalid_request', message);
    }
    let namespaceYaml: ValidationIssue[] = [];
    let config: NamespaceConfig | undefined;
    const given = body.data.namespaceYaml;
    const text = given ?? (await getNamespaceFile(ctx.store, ns, 'namespace.yaml'))?.toString('utf8');
    if (text !== undefined) {
      const parsed = parseNamespaceConfig(text);
      if (parsed.ok) config = parsed.config;
      else if (given !== undefined) namespaceYaml = parsed.errors;
    }
    const flows = body.data.flows.map(({ id, source }) => {
      const parsed = validateFlowFile(source, { namespace: ns.namespace, flowId: id }, config);
      return { id, errors: parsed.ok ? [] : parsed.errors };
    });
    const valid = namespaceYaml.length === 0 && flows.every((f) => f.errors.length === 0);
    res.json({ valid, namespaceYaml, flows });
  });

  return router;
}
