import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunnerClient, RunnerTaskSpec, runnerPaths } from '@sluice/protocol';

const WARM_UP_ID = 'standby-warm-up';

/** A spec as the runner API would send one; parsed by the client like a real one. */
const SAMPLE_SPEC: RunnerTaskSpec = {
  taskRunId: WARM_UP_ID,
  executionId: WARM_UP_ID,
  taskId: WARM_UP_ID,
  attempt: 1,
  fence: 1,
  task: { type: 'command', command: ['true'] },
  env: {},
  timeoutMs: 1_000,
  heartbeatIntervalMs: 1_000,
  cancelGraceMs: 1_000,
  snapshot: null,
  limits: { artifactMaxBytes: 1, artifactsTotalMaxBytes: 1, outputValueMaxBytes: 1, logLineMaxBytes: 1 },
};

/**
 * Runs once, in a standby runner, what the first moments of a task run need
 * and Node loads or compiles only on first use: the runner client's first
 * request (node:http's client and parser) and its parsing of a spec (zod
 * compiles a schema on its first parse). It talks to a throwaway runner API
 * of its own on 127.0.0.1, so nothing leaves the host and no token is
 * involved. Best effort: false when it failed, and
 * the task run then simply pays these costs itself.
 */
export async function warmUp(timeoutMs = 5_000): Promise<boolean> {
  const server = createServer((req, res) => answer(req, res));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const client = new RunnerClient({
      apiUrl: `http://127.0.0.1:${port}`,
      runToken: WARM_UP_ID,
      taskRunId: WARM_UP_ID,
      retry: { maxElapsedMs: 0 },
      requestTimeoutMs: timeoutMs,
    });
    await client.getSpec();
    await client.started(process.pid);
    return true;
  } catch {
    return false;
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

function answer(req: IncomingMessage, res: ServerResponse): void {
  const body =
    req.method === 'GET' && req.url === runnerPaths.spec(WARM_UP_ID) ? SAMPLE_SPEC : { ok: true as const };
  // Drain the request before answering, as a real server would.
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
}
