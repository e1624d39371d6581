import {
  createTestDatabase,
  ensureBusyboxStaticImage,
  ensureGlibcNoLibstdcxxImage,
  ensureRunnerImage,
  requireDocker,
  type AppProcess,
  type TestDatabase,
} from '@sluice/testing';
import { startExecutor, startJobs, startServer, type ServerProcess } from './topology';

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

/** Containers of one owner, running or not. */
export async function ownedContainers(docker: Docker, ownerId: string): Promise<ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`sluice.io/owner=${ownerId}`] } });
}

/** Removes every container of the owner (test cleanup, whatever a test left). */
export async function removeOwned(docker: Docker, ownerId: string): Promise<void> {
  for (const c of await ownedContainers(docker, ownerId)) {
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

/** One test file's distributed topology around a docker executor; filled in by its beforeAll. */
export interface DockerTopology {
  fx: DockerFixtures;
  db: TestDatabase;
  /** Assignable: a test that restarts the server puts the new one here, and afterAll stops it. */
  server: ServerProcess;
  jobs: AppProcess;
  executor: AppProcess;
  /** The processes whose output `explained` prints when a step fails. */
  everything(): Record<string, AppProcess>;
}

/**
 * Registers the file's beforeAll/afterAll: its own database, a server, jobs
 * and one docker executor with `ownerId`; afterwards all are stopped and the
 * owner's containers removed.
 */
export function useDockerTopology(
  ownerId: string,
  options: {
    jobsEnv?: Record<string, string>;
    /** Extra executor variables, computed once the server runs. */
    executorEnv?: () => Promise<Record<string, string>>;
  } = {},
): DockerTopology {
  // Every field is set in beforeAll, before any test reads it.
  const topology = {} as DockerTopology;
  topology.everything = () => ({ executor: topology.executor, jobs: topology.jobs, server: topology.server });
  beforeAll(async () => {
    topology.fx = await dockerFixtures();
    topology.db = await createTestDatabase();
    topology.server = await startServer(topology.db.url);
    topology.jobs = await startJobs(topology.db.url, {
      PIPELINE_JOB_SCHEDULER_INTERVAL: '200ms',
      ...options.jobsEnv,
    });
    topology.executor = await startDockerExecutor(
      topology.server,
      ownerId,
      topology.fx,
      (await options.executorEnv?.()) ?? {},
    );
  }, 120_000);
  afterAll(async () => {
    await topology.executor?.stop();
    await topology.jobs?.stop();
    await topology.server?.stop();
    if (topology.fx) await removeOwned(topology.fx.docker, ownerId);
    await topology.db?.drop();
  });
  return topology;
}
