import {
  ensureBusyboxStaticImage,
  ensureGlibcNoLibstdcxxImage,
  ensureRunnerImage,
  requireDocker,
  type AppProcess,
} from '@sluice/testing';
import { startExecutor, useTopology, type ServerProcess, type Topology } from './topology';

/** The engine client of the tests (dockerode, through @sluice/testing). */
export type Docker = Awaited<ReturnType<typeof requireDocker>>;
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

/**
 * `sluice docker-executor` with the docker executor on. Containers use the
 * host network, so the runner reaches the test server on 127.0.0.1.
 */
export function startDockerExecutor(
  server: Pick<ServerProcess, 'internalUrl'>,
  ownerId: string,
  fixtures: DockerFixtures,
  env: Record<string, string> = {},
): Promise<AppProcess> {
  return startExecutor(server, ownerId, {
    SLUICE_EXECUTORS: 'docker',
    DOCKER_HOST: process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock',
    DOCKER_EXECUTOR_NETWORK: 'host',
    SLUICE_RUNNER_IMAGE: fixtures.runner,
    SLUICE_API_URL: server.internalUrl,
    DOCKER_EXECUTOR_HEARTBEAT_INTERVAL: '1s',
    ...env,
  });
}

/** Every container of one owner, running or not: task containers and the runner copy's. */
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

export const dockerFlow = (image: string, command: string[], extra = ''): string =>
  [
    'tasks:',
    '  - id: main',
    '    type: command',
    `    executor: { type: docker, image: "${image}"${extra} }`,
    `    command: ${JSON.stringify(command)}`,
    '',
  ].join('\n');

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

/** A docker test file's topology (useTopology with jobs) and its engine and images. */
export interface DockerTopology extends Topology {
  fx: DockerFixtures;
}

/**
 * useTopology with `sluice jobs` and one docker executor with `ownerId`;
 * afterwards the owner's containers are removed too.
 */
export function useDockerTopology(
  ownerId: string,
  options: {
    jobsEnv?: Record<string, string>;
    /** Extra executor variables, computed once the server runs. */
    executorEnv?: () => Promise<Record<string, string>>;
  } = {},
): DockerTopology {
  // fx is set when the executor starts, in beforeAll, before any test reads it.
  const topology = useTopology({
    jobsEnv: { PIPELINE_JOB_SCHEDULER_INTERVAL: '200ms', ...options.jobsEnv },
    startExecutor: async (server) => {
      topology.fx = await dockerFixtures();
      return startDockerExecutor(server, ownerId, topology.fx, (await options.executorEnv?.()) ?? {});
    },
    cleanup: async () => {
      if (topology.fx) await removeOwned(topology.fx.docker, ownerId);
    },
  }) as DockerTopology;
  return topology;
}
