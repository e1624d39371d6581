import { ConfigError, type ServerConfig } from '@sluice/config';
import {
  createDockerClient,
  dockerAnswers,
  DockerExecutor,
  InlineExecutor,
  ProcessExecutor,
  type Executor,
} from '@sluice/executors';

/** Spec "Which executors an instance has": the Docker API must answer a ping within 2 s. */
const DOCKER_PING_TIMEOUT_MS = 2_000;

export interface StandaloneExecutors {
  executors: Executor[];
  /** Set when the docker executor is on: its engine client, for owner-ID cleanup. */
  docker: { client: ReturnType<typeof createDockerClient>; executor: DockerExecutor; ownerId: string } | null;
}

/**
 * The embedded instance's executors. Inline is always on; `auto` turns on
 * process, and docker when the engine (DOCKER_HOST) answers a ping within
 * 2 s. An explicit list turns on exactly those plus inline. Docker needs
 * DOCKER_EXECUTOR_OWNER_ID (its containers' owner label): without it the
 * server does not start, and the error names the variable.
 */
export async function standaloneExecutors(
  config: ServerConfig,
  runnerCommand: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<StandaloneExecutors> {
  const selection = config.instance.executors;
  const wanted =
    selection === 'auto' ? ['inline', 'process', 'docker'] : [...new Set(['inline', ...selection])];
  const unavailable = wanted.filter((t) => t !== 'inline' && t !== 'process' && t !== 'docker');
  if (unavailable.length > 0) {
    throw new Error(
      `SLUICE_EXECUTORS: ${unavailable.join(', ')} cannot run in this build yet (inline, process and docker can); ` +
        'remove them from the list or use auto',
    );
  }
  const executors: Executor[] = [new InlineExecutor()];
  if (wanted.includes('process')) {
    executors.push(
      new ProcessExecutor({
        runnerCommand,
        standbyRunners: config.instance.standbyRunners,
        // Process and docker task runs share SLUICE_WORKER_SLOTS (standaloneSlotGroups).
        slots: config.instance.workerSlots,
      }),
    );
  }
  if (!wanted.includes('docker')) return { executors, docker: null };

  const client = createDockerClient(env);
  if (!(await dockerAnswers(client, DOCKER_PING_TIMEOUT_MS))) {
    if (selection === 'auto') return { executors, docker: null };
    throw new ConfigError('server', [
      {
        variable: 'SLUICE_EXECUTORS',
        message: `lists docker, but no Docker API answered a ping within ${DOCKER_PING_TIMEOUT_MS / 1000} s (DOCKER_HOST)`,
      },
    ]);
  }
  const ownerId = config.docker.ownerId;
  if (!ownerId) {
    throw ConfigError.missing(
      'server',
      'DOCKER_EXECUTOR_OWNER_ID',
      'this server runs the docker executor (SLUICE_EXECUTORS), which labels its containers with it and limits its cleanup to them',
    );
  }
  const executor = new DockerExecutor({
    docker: client,
    ownerId,
    runnerImage: config.instance.runnerImage,
    network: config.docker.network,
    heartbeatIntervalMs: config.docker.heartbeatInterval,
    maxDurationMs: config.docker.maxSyncDuration,
    runtimeDefaults: config.instance.runtimeDefaults,
  });
  executors.push(executor);
  return { executors, docker: { client, executor, ownerId } };
}
