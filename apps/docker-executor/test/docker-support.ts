import { randomBytes } from 'node:crypto';
import {
  createTestDatabase,
  dockerFixtures,
  removeOwned,
  startExecutor,
  startJobs,
  startServer,
  useTopology,
  type AppProcess,
  type DockerFixtures,
  type ServerProcess,
  type TestDatabase,
  type Topology,
} from '@sluice/testing';

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

export const dockerFlow = (image: string, command: string[], extra = ''): string =>
  [
    'tasks:',
    '  - id: main',
    '    type: command',
    `    executor: { type: docker, image: "${image}"${extra} }`,
    `    command: ${JSON.stringify(command)}`,
    '',
  ].join('\n');

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

/** A server and `sluice jobs` for a file whose tests start (and kill, restart) their own executors. */
export interface DockerServer {
  readonly fx: DockerFixtures;
  readonly db: TestDatabase;
  readonly server: ServerProcess;
  readonly jobs: AppProcess;
  /** The test's own processes (its executors), stopped after it. */
  readonly processes: Record<string, AppProcess>;
  /** A fresh owner ID `<prefix>-<hex>`; its containers and volumes are removed after the file. */
  newOwner(prefix: string): string;
  /** For `explained`: the test's processes, jobs and the server. */
  everything(): Record<string, AppProcess>;
}

/**
 * Registers the file's hooks: the engine's fixtures, a database, a server and
 * `sluice jobs` with a heartbeat timeout of 5 s; `setup` runs once the
 * database exists, `teardown` after every process stopped, before it is dropped.
 */
export function useDockerServer(
  options: {
    setup?: (t: DockerServer) => Promise<void>;
    teardown?: () => Promise<void>;
    timeoutMs?: number;
  } = {},
): DockerServer {
  const owners: string[] = [];
  // Every field is set in beforeAll, before any test reads it.
  const t = {} as { -readonly [K in keyof DockerServer]: DockerServer[K] };
  t.processes = {};
  t.newOwner = (prefix) => {
    const owner = `${prefix}-${randomBytes(3).toString('hex')}`;
    owners.push(owner);
    return owner;
  };
  t.everything = () => ({ ...t.processes, jobs: t.jobs, server: t.server });
  beforeAll(async () => {
    t.fx = await dockerFixtures();
    t.db = await createTestDatabase();
    await options.setup?.(t);
    t.server = await startServer(t.db.url, { PIPELINE_HEARTBEAT_TIMEOUT: '5s' });
    t.jobs = await startJobs(t.db.url, {
      PIPELINE_JOB_SCHEDULER_INTERVAL: '200ms',
      PIPELINE_JOB_WATCHDOG_INTERVAL: '1s',
      PIPELINE_HEARTBEAT_TIMEOUT: '5s',
    });
  }, options.timeoutMs ?? 120_000);
  afterEach(async () => {
    await Promise.all(Object.values(t.processes).map((p) => p.stop()));
    for (const key of Object.keys(t.processes)) delete t.processes[key];
  });
  afterAll(async () => {
    await t.jobs?.stop();
    await t.server?.stop();
    if (t.fx) {
      for (const owner of owners) {
        await removeOwned(t.fx.docker, owner);
        const { Volumes } = await t.fx.docker.listVolumes({
          filters: { label: [`sluice.io/owner=${owner}`] },
        });
        for (const v of Volumes ?? [])
          await t.fx.docker
            .getVolume(v.Name)
            .remove({ force: true })
            .catch(() => undefined);
      }
    }
    await options.teardown?.();
    await t.db?.drop();
  });
  return t;
}
