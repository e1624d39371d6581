import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningHttpServer {
  server: Server;
  /** The bound port (the real one when the address asked for port 0). */
  port: number;
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then drops what is left. */
  close(graceMs?: number): Promise<void>;
}

/** Splits `host:port` or `[v6]:port`. */
function parseAddr(addr: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(addr.trim());
  const port = Number(match?.[3]);
  if (!match || port > 65535)
    throw new Error(`invalid listen address ${JSON.stringify(addr)}: expected host:port`);
  return { host: match[1] ?? match[2] ?? '', port };
}

/** Listens on `host:port` (e.g. INTERNAL_HTTP_SERVER_ADDR); rejects when the port is taken. */
export async function startHttpServer(app: RequestListener, addr: string): Promise<RunningHttpServer> {
  const { host, port } = parseAddr(addr);
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: (graceMs = 5000) =>
      new Promise<void>((resolve, reject) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close((error) => {
          clearTimeout(force);
          if (error) reject(error);
          else resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
