import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMetrics } from '@sluice/observability';
import { freePort } from '@sluice/testing';
import { serverAnswers, startInternalServer } from '../src/internal-server';

/** A stand-in for a server's internal API: /live answers with `status`, or never when status is null. */
async function fakeServer(status: number | null): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (status === null) return; // hangs
    res.writeHead(req.url === '/live' ? status : 404, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('serverAnswers (an executor is ready when its server is)', () => {
  it('is ready when GET /live answers 200', async () => {
    const server = await fakeServer(200);
    expect(await serverAnswers(server.url)).toEqual({ ok: true });
    await server.close();
  });

  it('is not ready on any other answer, naming the URL and the status', async () => {
    const server = await fakeServer(503);
    expect(await serverAnswers(server.url)).toEqual({
      ok: false,
      detail: `server: GET ${server.url}/live answered 503`,
    });
    await server.close();
  });

  it('is not ready when nothing listens', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const result = await serverAnswers(url);
    expect(result).toMatchObject({ ok: false });
    expect(typeof result === 'object' && result.detail).toContain(`GET ${url}/live`);
  });

  it('is not ready when the server does not answer in time', async () => {
    const server = await fakeServer(null);
    expect(await serverAnswers(server.url, fetch, 200)).toEqual({
      ok: false,
      detail: `server: GET ${server.url}/live: no answer within 200 ms`,
    });
    await server.close();
  });
});

describe('startInternalServer', () => {
  it('serves /live, /ready from the check and /metrics, and nothing else', async () => {
    let ready = false;
    const internal = await startInternalServer({
      addr: '127.0.0.1:0',
      metrics: createMetrics(),
      ready: async () => (ready ? { ok: true } : { ok: false, detail: 'server: no answer' }),
    });
    const base = `http://127.0.0.1:${internal.port}`;
    try {
      expect((await fetch(`${base}/live`)).status).toBe(200);
      const notReady = await fetch(`${base}/ready`);
      expect(notReady.status).toBe(503);
      expect(await notReady.json()).toEqual({ status: 'unavailable', detail: 'server: no answer' });
      ready = true;
      expect((await fetch(`${base}/ready`)).status).toBe(200);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toContain('sluice_claims_total');
      expect(metrics).toContain('sluice_http_request_duration_seconds');
      const executorApi = await fetch(`${base}/internal/v1/executor/claim`, { method: 'POST' });
      expect(executorApi.status).toBe(404);
    } finally {
      await internal.close();
    }
  });
});
