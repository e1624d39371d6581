import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFromEnv } from '@sluice/testing';

/**
 * A plain-HTTP proxy in front of the real API server, for what the server will not do on
 * demand: it logs every request, answers the next watches with `410 Gone` exactly as the API
 * server words an expired resourceVersion, and drops the open watch connections.
 */
export interface KubeProxy {
  /** A KubeConfig whose cluster is this proxy (same token as the real one). */
  config: KubeConfig;
  /** `METHOD path?query` of every request, in order. */
  requests: string[];
  /** Watch connections open now. */
  openWatches(): number;
  /** The next `count` watch requests get a 410 ERROR event, then the end of the stream. */
  goneNext(count: number): void;
  /** Destroys every open watch connection (a dropped connection, not a clean end). */
  dropWatches(): void;
  close(): Promise<void>;
}

export async function startKubeProxy(): Promise<KubeProxy> {
  const access = kubeConfigFromEnv();
  if (!access) throw new Error('KUBECONFIG is not set');
  const upstream = new URL(access.server);
  const requests: string[] = [];
  const watches = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  let gone = 0;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    requests.push(`${req.method} ${url}`);
    const isWatch = new URL(url, 'http://proxy').searchParams.get('watch') === 'true';
    if (isWatch && gone > 0) {
      gone -= 1;
      const version = new URL(url, 'http://proxy').searchParams.get('resourceVersion') ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        `${JSON.stringify({
          type: 'ERROR',
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: `too old resource version: ${version}`,
            reason: 'Expired',
            code: 410,
          },
        })}\n`,
      );
      return;
    }
    const headers = { ...req.headers, host: upstream.host };
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: url,
        headers,
        ...(access.caData ? { ca: access.caData } : {}),
        rejectUnauthorized: !access.insecureSkipTlsVerify,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (isWatch) {
          watches.add(res);
          res.on('close', () => watches.delete(res));
          // Each watch event at once, as the API server flushes it.
          answer.on('data', (chunk: Buffer) => res.write(chunk));
          answer.on('end', () => res.end());
        } else {
          answer.pipe(res);
        }
      },
    );
    forward.on('error', () => res.destroy());
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'proxy', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'proxy', token: access.token }],
    contexts: [{ name: 'proxy', cluster: 'proxy', user: 'proxy' }],
    currentContext: 'proxy',
  });

  return {
    config,
    requests,
    openWatches: () => watches.size,
    goneNext: (count) => {
      gone += count;
    },
    dropWatches: () => {
      for (const res of watches) res.socket?.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
