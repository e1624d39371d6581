import express from 'express';
import request from 'supertest';
import {
  createMetrics,
  httpMetricsMiddleware,
  probeRoutes,
  startHttpServer,
  type ReadyResult,
  type RunningHttpServer,
} from '../src';

describe('probes over HTTP', () => {
  let ready: () => Promise<ReadyResult> = async () => true;
  let running: RunningHttpServer;
  let base: string;
  const metrics = createMetrics({ service: 'test' });

  beforeAll(async () => {
    const app = express();
    app.use(httpMetricsMiddleware(metrics));
    probeRoutes(app, { ready: () => ready(), registry: metrics.registry, readyTimeoutMs: 200 });
    app.get('/things/:id', (_req, res) => {
      res.status(201).json({});
    });
    running = await startHttpServer(app, '127.0.0.1:0');
    base = `http://127.0.0.1:${running.port}`;
  });
  afterAll(() => running.close());

  it('answers /live', async () => {
    const response = await fetch(`${base}/live`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers /ready with 200 when ready and 503 with the detail when not', async () => {
    ready = async () => true;
    expect((await fetch(`${base}/ready`)).status).toBe(200);

    ready = async () => ({ ok: false, detail: 'database unreachable' });
    const notReady = await fetch(`${base}/ready`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ status: 'unavailable', detail: 'database unreachable' });
  });

  it('answers 503 when the check throws or hangs', async () => {
    ready = async () => {
      throw new Error('connect ECONNREFUSED postgres://u:pw1234@db');
    };
    const failed = await fetch(`${base}/ready`);
    expect(failed.status).toBe(503);
    expect(await failed.json()).toEqual({
      status: 'unavailable',
      detail: 'connect ECONNREFUSED postgres://u:[redacted]@db',
    });

    ready = () => new Promise<boolean>(() => undefined);
    const hung = await fetch(`${base}/ready`);
    expect(hung.status).toBe(503);
  });

  it('serves every Sluice metric name and records requests by route pattern', async () => {
    await fetch(`${base}/things/42`);
    const response = await request(base).get('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    for (const name of [
      'sluice_claims_total',
      'sluice_claim_duration_seconds',
      'sluice_queue_depth',
      'sluice_task_runs_running',
      'sluice_heartbeats_total',
      'sluice_watchdog_failures_total',
      'sluice_http_request_duration_seconds',
      'sluice_task_runs_finished_total',
      'process_cpu_user_seconds_total',
    ]) {
      expect(response.text).toContain(name);
    }
    expect(response.text).toMatch(
      /sluice_http_request_duration_seconds_count\{service="test",method="GET",route="\/things\/:id",status="201"\} 1/,
    );
  });

  it('refuses to listen on a port that is taken, and on a malformed address', async () => {
    await expect(startHttpServer(express(), `127.0.0.1:${running.port}`)).rejects.toThrow(/EADDRINUSE/);
    await expect(startHttpServer(express(), 'localhost')).rejects.toThrow(/invalid listen address/);
  });

  it('reports the address it bound: the host asked for and the real port for port 0', async () => {
    expect(running.address).toBe(`127.0.0.1:${running.port}`);
    const any = await startHttpServer(express(), '0.0.0.0:0');
    try {
      expect(any.port).toBeGreaterThan(0);
      expect(any.address).toBe(`0.0.0.0:${any.port}`);
    } finally {
      await any.close();
    }
  });
});
