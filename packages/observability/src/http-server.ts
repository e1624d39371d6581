import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningHttpServer {
  server: Server;
  /** The bound port (the real one when the address asked for port 0). */
  port: number;
  /**
   * The bound `host:port` (`[v6]:port`) as the socket reports it: what the
   * start log shows, so it says 0.0.0.0 when that is what was bound, and the
   * real port when the address asked for port 0.
   */
  address: string;
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

function formatAddress({ address, family, port }: AddressInfo): string {
  return family === 'IPv6' ? `[${address}]:${port}` : `${address}:${port}`;
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
  const bound = server.address() as AddressInfo;
  return {
    server,
    port: bound.port,
    address: formatAddress(bound),
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
