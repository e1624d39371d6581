import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import {
  CommitStateRequest,
  FENCE_HEADER,
  HeartbeatRequest,
  LogBatchRequest,
  MetricsRequest,
  OutputsRequest,
  ResultRequest,
  RUNNER_API_PREFIX,
  StartedRequest,
} from '@sluice/protocol';
import type { RunnerPrincipal, RunnerService } from '@sluice/engine';
import { jsonBody, RUNNER_BODY_LIMITS as LIMITS } from './body-limits';
import { HttpError } from './http-errors';
import { bearerToken } from './user-auth';

/**
 * The runner API (/internal/v1/runner/task-runs/:id/...). Every call carries
 * the task run's own token; every write carries the fence as well. The token
 * is checked before the body is read, and each route reads at most its own
 * limit (body-limits.ts). Bodies are validated with the protocol package's
 * schemas, as the runner validates the answers.
 */
export function runnerRouter(service: RunnerService, limits: { artifactMaxBytes: number }): Router {
  const router = Router();

  const principal = async (req: Request): Promise<RunnerPrincipal> => {
    const token = bearerToken(req);
    if (!token) throw new HttpError(401, 'unauthorized', 'missing run token');
    return service.authenticate(token, String(req.params.id), req.method === 'GET' ? 'read' : 'write');
  };
  // Placed before each route's body parser: a refused call is answered before its body is read.
  const authenticate: RequestHandler = async (req, res, next) => {
    res.locals.runner = await principal(req);
    next();
  };

  const base = `${RUNNER_API_PREFIX}/task-runs/:id`;

  router.get(`${base}/spec`, authenticate, async (_req, res) => {
    res.json(await service.spec(runnerOf(res)));
  });

  router.get(`${base}/snapshot`, authenticate, async (_req, res) => {
    const bundle = await service.snapshot(runnerOf(res));
    if (!bundle) throw new HttpError(404, 'not_found', 'this execution has no snapshot');
    res.type('application/gzip').send(bundle);
  });

  router.post(`${base}/started`, authenticate, jsonBody(LIMITS.started), async (req, res) => {
    await service.started(runnerOf(res), StartedRequest.parse(req.body).fence);
    res.json({ ok: true });
  });

  router.post(`${base}/logs`, authenticate, jsonBody(LIMITS.logs), async (req, res) => {
    res.json({ accepted: await service.logs(runnerOf(res), LogBatchRequest.parse(req.body)) });
  });

  router.post(`${base}/outputs`, authenticate, jsonBody(LIMITS.outputs), async (req, res) => {
    await service.outputs(runnerOf(res), OutputsRequest.parse(req.body));
    res.json({ ok: true });
  });

  router.post(`${base}/metrics`, authenticate, jsonBody(LIMITS.metrics), async (req, res) => {
    await service.metrics(runnerOf(res), MetricsRequest.parse(req.body));
    res.json({ ok: true });
  });

  router.put(
    `${base}/artifacts/:name`,
    authenticate,
    // One byte over the limit reaches the service, which refuses it with the artifact's name.
    express.raw({ type: () => true, limit: limits.artifactMaxBytes + 1 }),
    async (req, res) => {
      const fence = Number(req.header(FENCE_HEADER));
      if (!Number.isInteger(fence))
        throw new HttpError(400, 'invalid_request', `${FENCE_HEADER} header is required`);
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      await service.artifact(runnerOf(res), fence, String(req.params.name), body);
      res.json({ ok: true });
    },
  );

  router.post(`${base}/sync/state`, authenticate, jsonBody(LIMITS.syncState), async (req, res) => {
    res.json({ committed: await service.commitState(runnerOf(res), CommitStateRequest.parse(req.body)) });
  });

  router.post(`${base}/heartbeat`, authenticate, jsonBody(LIMITS.heartbeat), async (req, res) => {
    res.json(await service.heartbeat(runnerOf(res), HeartbeatRequest.parse(req.body).fence));
  });

  router.post(`${base}/result`, authenticate, jsonBody(LIMITS.result), async (req, res) => {
    res.json({ state: await service.result(runnerOf(res), ResultRequest.parse(req.body)) });
  });

  return router;
}

/** The caller `authenticate` admitted; kept on res.locals, which is request-scoped. */
function runnerOf(res: Response): RunnerPrincipal {
  return res.locals.runner as RunnerPrincipal;
}
