import express, { Router } from 'express';
import { parseNamespaceConfig } from '@sluice/flows';
import { deleteNamespaceFile, getNamespaceFile, listNamespaceFiles, putNamespaceFile } from '@sluice/store';
import type { PublicApiContext } from '../context';
import { HttpError } from '../http-errors';
import { PageQuery } from '@sluice/api-schemas';
import { callerNamespace, checkFilePath } from './names';
import { nameAfter, pageOf, parseQuery } from './paging';
import { checkNamespaceRuleChange } from './namespace-rules';

const rawBody = express.raw({ type: () => true, limit: '10mb' });

export function fileRoutes(ctx: PublicApiContext): Router {
  const router = Router();

  router.put('/namespaces/:ns/files/*path', rawBody, async (req, res) => {
    const ns = callerNamespace(req, res);
    const path = checkFilePath(req.params.path as unknown as string[]);
    const content: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (path === 'namespace.yaml') {
      const parsed = parseNamespaceConfig(content.toString('utf8'));
      if (!parsed.ok) return void res.status(422).json({ errors: parsed.errors });
      await checkNamespaceRuleChange(ctx.store, res, ns, content);
    }
    const { sha256 } = await putNamespaceFile(ctx.store, ns, path, content);
    res.json({ namespace: ns.namespace, path, size: content.length, sha256 });
  });

  router.get('/namespaces/:ns/files', async (req, res) => {
    const ns = callerNamespace(req, res);
    const { limit, cursor } = parseQuery(PageQuery, req);
    const rows = await listNamespaceFiles(ctx.store, ns, { limit: limit + 1, after: nameAfter(cursor) });
    const page = pageOf(rows, limit, (f) => [f.path]);
    res.json({ files: page.items, nextCursor: page.nextCursor });
  });

  router.get('/namespaces/:ns/files/*path', async (req, res) => {
    const ns = callerNamespace(req, res);
    const path = checkFilePath(req.params.path as unknown as string[]);
    const file = await getNamespaceFile(ctx.store, ns, path);
    if (!file) throw new HttpError(404, 'not_found', `file ${ns.namespace}/${path} not found`);
    res.type('application/octet-stream').send(file);
  });

  router.delete('/namespaces/:ns/files/*path', async (req, res) => {
    const ns = callerNamespace(req, res);
    const path = checkFilePath(req.params.path as unknown as string[]);
    if (path === 'namespace.yaml') await checkNamespaceRuleChange(ctx.store, res, ns, null);
    if (!(await deleteNamespaceFile(ctx.store, ns, path)))
      throw new HttpError(404, 'not_found', `file ${ns.namespace}/${path} not found`);
    res.status(204).end();
  });

  return router;
}
