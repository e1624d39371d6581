import type Docker from 'dockerode';
import { requireDocker } from './docker';
import { ensureBusyboxStaticImage, ensureGlibcNoLibstdcxxImage, ensureRunnerImage } from './docker-images';

/**
 * The containers an executor owns, as end-to-end tests look at them: every
 * container an executor creates carries the `sluice.io/owner` label.
 */

export type ContainerInfo = Awaited<ReturnType<Docker['listContainers']>>[number];

/** The engine and the images of the docker tests (built locally: no registry is reachable). */
export interface DockerFixtures {
  docker: Docker;
  busybox: string;
  glibc: string;
  runner: string;
}

export async function dockerFixtures(): Promise<DockerFixtures> {
  const docker = await requireDocker();
  return {
    docker,
    busybox: await ensureBusyboxStaticImage(docker),
    glibc: await ensureGlibcNoLibstdcxxImage(docker),
    runner: await ensureRunnerImage(docker),
  };
}

/** Containers of one owner, running or not. */
function allOwned(docker: Docker, ownerId: string): Promise<ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`sluice.io/owner=${ownerId}`] } });
}

/** Task containers of one owner, running or not (the short-lived runner-copy container is the owner's too, and left out). */
export async function ownedContainers(docker: Docker, ownerId: string): Promise<ContainerInfo[]> {
  return (await allOwned(docker, ownerId)).filter((c) => c.Labels['sluice.io/purpose'] !== 'runner-copy');
}

/** Removes every container of the owner (test cleanup, whatever a test left). */
export async function removeOwned(docker: Docker, ownerId: string): Promise<void> {
  for (const c of await allOwned(docker, ownerId)) {
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => undefined);
  }
}

/** Waits until the owner has no container left (removal follows the result by a moment). */
export async function noContainersLeft(
  docker: Docker,
  ownerId: string,
  ms = 20_000,
): Promise<ContainerInfo[]> {
  const deadline = Date.now() + ms;
  let left = await ownedContainers(docker, ownerId);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = await ownedContainers(docker, ownerId);
  }
  return left;
}

/** Waits until the owner has a running container and returns it. */
export async function runningContainerOf(
  docker: Docker,
  ownerId: string,
  ms = 30_000,
  /** Only the container of this task run: another run's container may still be on its way out. */
  taskRunId?: string,
): Promise<ContainerInfo> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = (await ownedContainers(docker, ownerId)).find(
      (c) =>
        c.State === 'running' && (taskRunId === undefined || c.Labels['sluice.io/task-run'] === taskRunId),
    );
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no running container of owner ${ownerId} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
