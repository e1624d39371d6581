import express, { type Express, type RequestHandler, type Router } from 'express';
import type { RunnerService } from '@sluice/engine';
import { errorHandler, HttpError, type ErrorLog } from './http-errors';
import { executorRouter, type ExecutorRouterOptions } from './executor-router';
import { runnerRouter } from './runner-router';

/**
 * The internal API (INTERNAL_HTTP_SERVER_ADDR) of a server: the runner API
 * here, plus whatever the app mounts (probes, metrics, the executor API).
 */
export function createInternalApp(opts: {
  runner: RunnerService;
  artifactMaxBytes: number;
  log: ErrorLog;
  mount?: Array<Router | RequestHandler>;
  /** Mounts the executor API (/internal/v1/executor/...); servers only. */
  executor?: ExecutorRouterOptions;
}): Express {
  const app = express();
  app.disable('x-powered-by');
  for (const m of opts.mount ?? []) app.use(m);
  if (opts.executor) app.use(executorRouter(opts.executor));
  app.use(runnerRouter(opts.runner, { artifactMaxBytes: opts.artifactMaxBytes }));
  app.use((req, _res, next) =>
    next(new HttpError(404, 'not_found', `no route for ${req.method} ${req.path}`)),
  );
  app.use(errorHandler(opts.log));
  return app;
}
