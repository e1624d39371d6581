import express, { Router, type Request } from 'express';
import {
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
import { HttpError } from './http-errors';
import { bearerToken } from './user-auth';

/**
 * The runner API (/internal/v1/runner/task-runs/:id/...). Every call carries
 * the task run's own token; every write carries the fence as well. Bodies
 * are validated with the protocol package's schemas, as the runner validates
 * the answers.
 */
export function runnerRouter(service: RunnerService, limits: { artifactMaxBytes: number }): Router {
  const router = Router();
  const json = express.json({ limit: '32mb' });

  const principal = async (req: Request): Promise<RunnerPrincipal> => {
    const token = bearerToken(req);
    if (!token) throw new HttpError(401, 'unauthorized', 'missing run token');
    return service.authenticate(token, String(req.params.id), req.method === 'GET' ? 'read' : 'write');
  };

  const base = `${RUNNER_API_PREFIX}/task-runs/:id`;

  router.get(`${base}/spec`, async (req, res) => {
    res.json(await service.spec(await principal(req)));
  });

  router.get(`${base}/snapshot`, async (req, res) => {
    const bundle = await service.snapshot(await principal(req));
    if (!bundle) throw new HttpError(404, 'not_found', 'this execution has no snapshot');
    res.type('application/gzip').send(bundle);
  });

  router.post(`${base}/started`, json, async (req, res) => {
    const p = await principal(req);
    await service.started(p, StartedRequest.parse(req.body).fence);
    res.json({ ok: true });
  });

  router.post(`${base}/logs`, json, async (req, res) => {
    const p = await principal(req);
    res.json({ accepted: await service.logs(p, LogBatchRequest.parse(req.body)) });
  });

  router.post(`${base}/outputs`, json, async (req, res) => {
    const p = await principal(req);
    await service.outputs(p, OutputsRequest.parse(req.body));
    res.json({ ok: true });
  });

  router.post(`${base}/metrics`, json, async (req, res) => {
    const p = await principal(req);
    await service.metrics(p, MetricsRequest.parse(req.body));
    res.json({ ok: true });
  });

  router.put(
    `${base}/artifacts/:name`,
    express.raw({ type: () => true, limit: limits.artifactMaxBytes + 1 }),
    async (req, res) => {
      const p = await principal(req);
      const fence = Number(req.header(FENCE_HEADER));
      if (!Number.isInteger(fence))
        throw new HttpError(400, 'invalid_request', `${FENCE_HEADER} header is required`);
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      await service.artifact(p, fence, String(req.params.name), body);
      res.json({ ok: true });
    },
  );

  router.post(`${base}/heartbeat`, json, async (req, res) => {
    const p = await principal(req);
    res.json(await service.heartbeat(p, HeartbeatRequest.parse(req.body).fence));
  });

  router.post(`${base}/result`, json, async (req, res) => {
    const p = await principal(req);
    res.json({ state: await service.result(p, ResultRequest.parse(req.body)) });
  });

  return router;
}
