import express, { Router, type Express } from 'express';
import type { PublicApiContext } from './context';
import { errorHandler, HttpError } from './http-errors';
import { requireUser } from './user-auth';
import { openApiDocument } from './openapi/document';
import { OPENAPI_JSON_PATH } from './openapi/operations';
import { connectionRoutes } from './public/connections';
import { executionListRoutes } from './public/execution-lists';
import { executionRoutes } from './public/executions';
import { executorRoutes } from './public/executors';
import { fileRoutes } from './public/files';
import { flowRoutes } from './public/flows';
import { namespaceRoutes } from './public/namespaces';
import { secretRoutes } from './public/secrets';
import { taskRunRoutes } from './public/task-runs';
import { validateRoutes } from './public/validate';

/** The public API (HTTP_SERVER_ADDR): every route under /api/v1 but the OpenAPI document needs a user JWT. */
export function createPublicApp(
  ctx: PublicApiContext,
  extra: { beforeRoutes?: express.RequestHandler[] } = {},
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  for (const h of extra.beforeRoutes ?? []) app.use(h);
  const api = Router();
  // The API's description holds no data: it is served without a token (docs/api.md).
  api.get(OPENAPI_JSON_PATH, (_req, res) => {
    res.json(openApiDocument());
  });
  // Before every route and its body parser: an unauthenticated body is never read (body-limits.test.ts).
  api.use(requireUser(ctx.jwtSecret));
  api.use(namespaceRoutes(ctx));
  api.use(flowRoutes(ctx));
  api.use(connectionRoutes(ctx));
  api.use(fileRoutes(ctx));
  api.use(validateRoutes(ctx));
  api.use(secretRoutes(ctx));
  api.use(executionListRoutes(ctx));
  api.use(executionRoutes(ctx));
  api.use(taskRunRoutes(ctx));
  api.use(executorRoutes(ctx));
  app.use('/api/v1', api);
  app.use((req, _res, next) =>
    next(new HttpError(404, 'not_found', `no route for ${req.method} ${req.path}`)),
  );
  app.use(errorHandler(ctx.log));
  return app;
}
