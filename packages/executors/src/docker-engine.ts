import Docker from 'dockerode';

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

/** A client for the engine that `env`'s DOCKER_HOST names (not necessarily this process's env). */
export function createDockerClient(env: NodeJS.ProcessEnv): Docker {
  return new Docker(dockerEndpoint(env));
}

/** True when the engine answers a ping within `timeoutMs` (spec: 2 s decides whether docker is on). */
export async function dockerAnswers(docker: Docker, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      docker.ping().then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
