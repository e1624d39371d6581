import { Router } from 'express';
import { listNamespaces } from '@sluice/store';
import type { PublicApiContext } from '../context';
import { PageQuery } from '@sluice/api-schemas';
import { currentUser } from '../user-auth';
import { nameAfter, pageOf, parseQuery } from './paging';

export function namespaceRoutes(ctx: PublicApiContext): Router {
  const router = Router();

  // The caller's workspace's namespaces: those that hold something (docs/store.md#workspaces).
  router.get('/namespaces', async (req, res) => {
    const { limit, cursor } = parseQuery(PageQuery, req);
    const names = await listNamespaces(ctx.store, currentUser(res).workspace, {
      limit: limit + 1,
      after: nameAfter(cursor),
    });
    const page = pageOf(names, limit, (n) => [n]);
    res.json({ namespaces: page.items.map((name) => ({ name })), nextCursor: page.nextCursor });
  });

  return router;
}
