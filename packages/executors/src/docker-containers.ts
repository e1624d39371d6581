import type Docker from 'dockerode';

/** True when the Engine API answered `status` (dockerode puts it on the error). */
export function isDockerStatus(err: unknown, status: number): boolean {
  return typeof err === 'object' && err !== null && 'statusCode' in err && err.statusCode === status;
}

/** Removes a container whatever its state; one already gone is fine. */
export async function removeContainer(container: Docker.Container): Promise<void> {
  try {
    await container.remove({ force: true });
  } catch (err) {
    // 404: gone already; 409: a removal is already in progress.
    if (!isDockerStatus(err, 404) && !isDockerStatus(err, 409)) throw err;
  }
}

/** Creates a container; a leftover of the same name (an executor that died mid-start) is replaced. */
export async function createReplacing(
  docker: Docker,
  spec: Docker.ContainerCreateOptions,
): Promise<Docker.Container> {
  try {
    return await docker.createContainer(spec);
  } catch (err) {
    if (!isDockerStatus(err, 409) || !spec.name) throw err;
    await removeContainer(docker.getContainer(spec.name));
    return docker.createContainer(spec);
  }
}

/** SIGTERM, then SIGKILL after `graceSeconds` (the engine's stop); a stopped or missing container is fine. */
export async function stopContainer(container: Docker.Container, graceSeconds: number): Promise<void> {
  try {
    await container.stop({ t: graceSeconds });
  } catch (err) {
    if (!isDockerStatus(err, 304) && !isDockerStatus(err, 404)) throw err;
  }
}

export type ContainerExit =
  | { state: 'exited'; exitCode: number }
  /** Removed before it could be waited on (by hand, or by another cleanup). */
  | { state: 'gone'; exitCode: null }
  /** The executor stopped watching (shutdown); the container may still run. */
  | { state: 'detached'; exitCode: null };

const RETRY_MS = 1_000;

/**
 * Waits for the container to stop running. A broken connection to the engine
 * is retried rather than taken as the end of the work: only the engine's
 * answer (an exit code, or "no such container") ends the wait.
 */
export async function waitForExit(container: Docker.Container, signal: AbortSignal): Promise<ContainerExit> {
  for (;;) {
    if (signal.aborted) return { state: 'detached', exitCode: null };
    try {
      const result = (await container.wait({ abortSignal: signal })) as { StatusCode: number };
      return { state: 'exited', exitCode: result.StatusCode };
    } catch (err) {
      if (signal.aborted) return { state: 'detached', exitCode: null };
      if (isDockerStatus(err, 404)) return { state: 'gone', exitCode: null };
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
