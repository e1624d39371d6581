import express from 'express';
import { errorMessage } from '@sluice/executors';
import {
  httpMetricsMiddleware,
  probeRoutes,
  startHttpServer,
  type Metrics,
  type ReadyResult,
  type RunningHttpServer,
} from '@sluice/observability';

/** /ready gives up on the server after this long. */
export const SERVER_CHECK_TIMEOUT_MS = 2_000;

/**
 * Readiness of an executor: its server answers GET /live on the internal API
 * within 2 s. The executor can do nothing without it, and a probe must not
 * hang on a server that does not answer.
 */
export async function serverAnswers(
  executorApiUrl: string,
  fetchImpl: typeof fetch = fetch,
  timeoutMs = SERVER_CHECK_TIMEOUT_MS,
): Promise<ReadyResult> {
  const url = `${executorApiUrl}/live`;
  try {
    const res = await fetchImpl(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer(); // release the connection
    return res.ok ? { ok: true } : { ok: false, detail: `server: GET ${url} answered ${res.status}` };
  } catch (err) {
    // AbortSignal.timeout rejects with a DOMException, which is not always an Error instance.
    const name = typeof err === 'object' && err !== null && 'name' in err ? String(err.name) : '';
    const reason =
      name === 'TimeoutError' || name === 'AbortError'
        ? `no answer within ${timeoutMs} ms`
        : errorMessage(err);
    return { ok: false, detail: `server: GET ${url}: ${reason}` };
  }
}

/** /live, /ready and /metrics on INTERNAL_HTTP_SERVER_ADDR; an executor serves nothing else there. */
export async function startInternalServer(options: {
  addr: string;
  metrics: Metrics;
  ready: () => Promise<ReadyResult>;
}): Promise<RunningHttpServer> {
  const app = express();
  app.disable('x-powered-by');
  app.use(httpMetricsMiddleware(options.metrics));
  probeRoutes(app, { ready: options.ready, registry: options.metrics.registry });
  app.use((req, res) => {
    res.status(404).json({ error: { code: 'not_found', message: `no route for ${req.method} ${req.path}` } });
  });
  return startHttpServer(app, options.addr);
}
