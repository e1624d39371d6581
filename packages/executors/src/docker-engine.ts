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

// Whether the engine answers is @sluice/executor-runtime's pingDocker: one ping for detection and the engine watch.

/** A client for the engine that `env`'s DOCKER_HOST names (not necessarily this process's env). */
export function createDockerClient(env: NodeJS.ProcessEnv): Docker {
  return new Docker(dockerEndpoint(env));
}
