import { request } from 'node:http';

/** Where the Docker API listens: DOCKER_HOST (unix:// or tcp://), else the default socket. */
export function dockerEndpoint(
  env: NodeJS.ProcessEnv,
): { socketPath: string } | { host: string; port: number } {
  const dockerHost = env.DOCKER_HOST?.trim();
  if (!dockerHost) return { socketPath: '/var/run/docker.sock' };
  if (dockerHost.startsWith('unix://')) return { socketPath: dockerHost.slice('unix://'.length) };
  const url = new URL(dockerHost.replace(/^tcp:\/\//, 'http://'));
  return { host: url.hostname, port: Number(url.port || 2375) };
}

/**
 * GET /_ping on the Docker API. True only for a 200 within `timeoutMs`; a
 * missing socket, a refusal or a slow daemon all count as "no Docker".
 */
export function pingDocker(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { ...dockerEndpoint(env), path: '/_ping', method: 'GET', timeout: timeoutMs },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy(new Error('docker ping timed out')));
    req.on('error', () => resolve(false));
    req.end();
  });
}
