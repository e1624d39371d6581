import { Router, type Express, type RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { Metrics } from './metrics';
import { redactString } from './redact';

export type ReadyResult = boolean | { ok: boolean; detail?: string };
export type ReadyCheck = () => Promise<ReadyResult>;

export interface ProbeOptions {
  /** Whether this process can do its work now (database reachable, server registered, …). */
  ready: ReadyCheck;
  registry: Registry;
  /** A check slower than this counts as not ready, so a hung dependency cannot hang the probe. Default 5 s. */
  readyTimeoutMs?: number;
}

/**
 * Mounts GET /live (the process answers), GET /ready (200, or 503 with a
 * detail) and GET /metrics (Prometheus text) on an app or router.
 */
export function probeRoutes(app: Express | Router, options: ProbeOptions): void {
  const probes = Router();
  probes.get('/live', (_req, res) => {
    res.json({ status: 'ok' });
  });
  probes.get('/ready', async (_req, res) => {
    const { ok, detail } = await checkReady(options.ready, options.readyTimeoutMs ?? 5000);
    res
      .status(ok ? 200 : 503)
      .json({ status: ok ? 'ok' : 'unavailable', ...(detail ? { detail: redactString(detail) } : {}) });
  });
  probes.get('/metrics', async (_req, res) => {
    res.set('Content-Type', options.registry.contentType).send(await options.registry.metrics());
  });
  app.use(probes);
}

async function checkReady(ready: ReadyCheck, timeoutMs: number): Promise<{ ok: boolean; detail?: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ ok: boolean; detail: string }>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, detail: `readiness check took longer than ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  try {
    const result = await Promise.race([ready().then(normalise), timeout]);
    return result;
  } catch (error) {
    return { ok: false, detail: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

function normalise(result: ReadyResult): { ok: boolean; detail?: string } {
  return typeof result === 'boolean' ? { ok: result } : result;
}

/**
 * Records sluice_http_request_duration_seconds for every request. The route
 * label is the matched pattern (`/api/v1/executions/:id`), never the raw path,
 * so label cardinality stays bounded; unmatched requests count as `unmatched`.
 */
export function httpMetricsMiddleware(metrics: Pick<Metrics, 'httpRequestDuration'>): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.httpRequestDuration.startTimer();
    res.once('finish', () => {
      const route: unknown = req.route;
      const pattern =
        typeof route === 'object' && route !== null && 'path' in route
          ? `${req.baseUrl}${String(route.path)}`
          : 'unmatched';
      stop({ method: req.method, route: pattern, status: String(res.statusCode) });
    });
    next();
  };
}
