import Docker from 'dockerode';

/**
 * The Docker engine of the tests: the one DOCKER_HOST names (started by
 * `eval "$(bash scripts/docker-engine.sh)"`, which `.ci/run` does), else the
 * engine's default socket. Tests that need Docker call this first, so a
 * missing engine fails with a message that says how to start one.
 */
export async function requireDocker(): Promise<Docker> {
  const docker = new Docker();
  const where = process.env.DOCKER_HOST ? `DOCKER_HOST=${process.env.DOCKER_HOST}` : 'DOCKER_HOST is unset';
  try {
    await withTimeout(docker.ping(), 5000);
  } catch (error) {
    throw new Error(
      `no Docker engine answers (${where}): ${(error as Error).message}. ` +
        'Start one with `eval "$(bash scripts/docker-engine.sh)"` and run the tests from that shell.',
    );
  }
  return docker;
}

/** Whether the engine still has the container (running or not). */
export function containerExists(docker: Docker, id: string): Promise<boolean> {
  return docker
    .getContainer(id)
    .inspect()
    .then(
      () => true,
      () => false,
    );
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to _ping within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
