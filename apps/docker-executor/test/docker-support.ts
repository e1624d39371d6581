import {
  dockerFixtures,
  removeOwned,
  startExecutor,
  useTopology,
  type AppProcess,
  type DockerFixtures,
  type ServerProcess,
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
