import express, { Router } from 'express';
import { putSecret } from '@sluice/engine';
import { deleteSecret, listSecretNames } from '@sluice/store';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { SecretBody } from '@sluice/api-schemas';
import { requireUser } from '../user-auth';
import { callerNamespace, checkName } from './names';

/**
 * Namespace secrets: write, delete and list names, each by an admin of the
 * namespace's workspace. No call ever returns a value; only the runner API
 * resolves them.
 */
export function secretRoutes(ctx: PublicApiContext): Router {
  const router = Router();
  const admin = requireUser(ctx.jwtSecret, 'admin');

  router.put('/namespaces/:ns/secrets/:name', admin, express.json({ limit: '128kb' }), async (req, res) => {
    const ns = callerNamespace(req, res);
    const name = checkName('secret', String(req.params.name));
    const body = SecretBody.safeParse(req.body);
    if (!body.success)
      throw new HttpError(400, 'invalid_request', 'the body must be {"value": "<non-empty string>"}');
    await putSecret(ctx.store, ctx.keyring, ns, name, body.data.value);
    ctx.log.info('secret stored', { ...ns, secret: name });
    res.status(204).end();
  });

  router.delete('/namespaces/:ns/secrets/:name', admin, async (req, res) => {
    const ns = callerNamespace(req, res);
    const name = checkName('secret', String(req.params.name));
    if (!(await deleteSecret(ctx.store, ns, name))) {
      throw new HttpError(404, 'not_found', `secret ${ns.namespace}/${name} not found`);
    }
    ctx.log.info('secret deleted', { ...ns, secret: name });
    res.status(204).end();
  });

  router.get('/namespaces/:ns/secrets', admin, async (req, res) => {
    res.json({ secrets: await listSecretNames(ctx.store, callerNamespace(req, res)) });
  });

  return router;
}
