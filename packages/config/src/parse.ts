import type {
  ConfigByApp,
  DaemonApp,
  DockerExecutorConfig,
  DockerSettings,
  InstanceSettings,
  JobsConfig,
  K8sExecutorConfig,
  K8sSettings,
  SchedulingSettings,
  ServerConfig,
} from './app-config';
import { hostName, k8sOwnerId, localInternalUrl, masterKeys, processTaskUser } from './derived';
import { EnvReader, type Env } from './reader';
import { REAL_HOST, type TaskUserHost } from './task-user';
import * as V from './vars';

export interface ParseOptions {
  /**
   * Server only: `sluice server --standalone`. Without it the server needs
   * SLUICE_DATABASE_URL, AUTH_JWT_SECRET and SLUICE_MASTER_KEYS (replicas
   * must share them); a standalone server falls back to an embedded database
   * and secrets generated under SLUICE_DATA_DIR.
   */
  standalone?: boolean;
  /** The server's uid and the user lookup behind SLUICE_PROCESS_TASK_USER; tests pass their own. */
  taskUserHost?: TaskUserHost;
}

/**
 * Reads and validates the configuration of one app. Throws a ConfigError
 * listing every bad or missing variable by name.
 */
export function parseEnv<A extends DaemonApp>(
  app: A,
  env: Env = process.env,
  options: ParseOptions = {},
): ConfigByApp[A] {
  const reader = new EnvReader(env);
  const config = BUILDERS[app](reader, options);
  return reader.finish(app, config);
}

type Builder<A extends DaemonApp> = (reader: EnvReader, options: ParseOptions) => ConfigByApp[A];

/** Exported for the test that checks each builder reads exactly the variables whose `apps` name it. */
export const BUILDERS: { [A in DaemonApp]: Builder<A> } = {
  server: buildServer,
  jobs: buildJobs,
  'docker-executor': buildDockerExecutor,
  'k8s-executor': buildK8sExecutor,
};

function buildServer(r: EnvReader, options: ParseOptions): ServerConfig {
  const standalone = options.standalone ?? false;
  const needed = 'sluice server without --standalone; replicas must share it';
  const internalHttpServerAddr = r.get(V.INTERNAL_HTTP_SERVER_ADDR);
  const apiUrl = r.get(V.SLUICE_API_URL) ?? localInternalUrl(internalHttpServerAddr);
  const instance = instanceSettings(r, options);
  const keys = masterKeys(r);
  const keysSet = [V.SLUICE_MASTER_KEYS, V.SECRET_ENCRYPTION_KEY, V.SECRET_ENCRYPTION_KEY_PREVIOUS].some(
    (v) => r.isSet(v),
  );
  if (!standalone && !keysSet) {
    r.problem(
      `${V.SLUICE_MASTER_KEYS.name} (or ${V.SECRET_ENCRYPTION_KEY.name})`,
      `is required (${needed}) but not set`,
    );
  }
  return {
    logLevel: r.get(V.LOG_LEVEL),
    httpServerAddr: r.get(V.HTTP_SERVER_ADDR),
    internalHttpServerAddr,
    dataDir: r.get(V.SLUICE_DATA_DIR),
    instanceId: r.get(V.SLUICE_INSTANCE_ID) ?? hostName(r),
    databaseUrl: standalone ? r.get(V.SLUICE_DATABASE_URL) : r.require(V.SLUICE_DATABASE_URL, needed),
    databasePreparedStatements: r.get(V.SLUICE_DATABASE_PREPARED_STATEMENTS),
    masterKeys: keys,
    authJwtSecret: standalone ? r.get(V.AUTH_JWT_SECRET) : r.require(V.AUTH_JWT_SECRET, needed),
    executorApiToken: r.get(V.PIPELINE_EXECUTOR_API_TOKEN),
    apiUrl,
    scheduling: schedulingSettings(r),
    instance: { ...instance, workerSlots: r.get(V.SLUICE_WORKER_SLOTS) },
    docker: dockerSettings(r, instance),
    k8s: k8sSettings(r, instance, { serverAddrDefault: apiUrl, ownerIdRequired: false }),
  };
}

function buildJobs(r: EnvReader): JobsConfig {
  return {
    logLevel: r.get(V.LOG_LEVEL),
    internalHttpServerAddr: r.get(V.INTERNAL_HTTP_SERVER_ADDR),
    databaseUrl: r.require(V.SLUICE_DATABASE_URL, 'sluice jobs works on the database'),
    databasePreparedStatements: r.get(V.SLUICE_DATABASE_PREPARED_STATEMENTS),
    scheduling: schedulingSettings(r),
  };
}

function buildDockerExecutor(r: EnvReader, options: ParseOptions): DockerExecutorConfig {
  const executorApiUrl = r.require(
    V.EXECUTOR_API_URL,
    'the executor reaches the server only through its internal API',
  );
  const instance = instanceSettings(r, options);
  return {
    logLevel: r.get(V.LOG_LEVEL),
    internalHttpServerAddr: r.get(V.INTERNAL_HTTP_SERVER_ADDR),
    executorApiUrl,
    executorApiToken: r.require(V.EXECUTOR_API_TOKEN, 'every executor API call carries it'),
    apiUrl: r.get(V.SLUICE_API_URL) ?? executorApiUrl,
    // Registers under the docker owner ID when the docker executor runs, else under this (DOCKER_EXECUTOR_OWNER_ID is only needed then).
    instanceId: r.get(V.SLUICE_INSTANCE_ID) ?? hostName(r),
    instance,
    docker: {
      ...dockerSettings(r, instance),
      maxConcurrentJobs: r.get(V.DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS),
    },
  };
}

function buildK8sExecutor(r: EnvReader, options: ParseOptions): K8sExecutorConfig {
  const executorApiUrl = r.require(
    V.EXECUTOR_API_URL,
    'the executor reaches the server only through its internal API',
  );
  const instance = instanceSettings(r, options);
  const k8s = k8sSettings(r, instance, { serverAddrDefault: executorApiUrl, ownerIdRequired: true });
  return {
    logLevel: r.get(V.LOG_LEVEL),
    internalHttpServerAddr: r.get(V.INTERNAL_HTTP_SERVER_ADDR),
    executorApiUrl,
    executorApiToken: r.require(V.EXECUTOR_API_TOKEN, 'every executor API call carries it'),
    instance: { ...instance, workerSlots: r.get(V.SLUICE_WORKER_SLOTS) },
    // ownerId is only undefined when a problem was recorded, and then finish() throws.
    k8s: { ...k8s, ownerId: k8s.ownerId ?? '' },
  };
}

function schedulingSettings(r: EnvReader): SchedulingSettings {
  return {
    schedulerInterval: r.get(V.PIPELINE_JOB_SCHEDULER_INTERVAL),
    maxConcurrentJobs: r.get(V.PIPELINE_MAX_CONCURRENT_JOBS),
    watchdogInterval: r.get(V.PIPELINE_JOB_WATCHDOG_INTERVAL),
    heartbeatTimeout: r.get(V.PIPELINE_HEARTBEAT_TIMEOUT),
    defaultMaxAttempts: r.get(V.PIPELINE_DEFAULT_MAX_ATTEMPTS),
    executorSilenceTimeout: r.get(V.PIPELINE_EXECUTOR_SILENCE_TIMEOUT),
    retention: r.get(V.SLUICE_RETENTION),
  };
}

function instanceSettings(r: EnvReader, options: ParseOptions): InstanceSettings {
  const cpu = r.get(V.PIPELINE_RUNTIME_DEFAULT_CPU);
  const memory = r.get(V.PIPELINE_RUNTIME_DEFAULT_MEMORY);
  return {
    executors: r.get(V.SLUICE_EXECUTORS),
    pools: r.get(V.SLUICE_POOLS),
    queuePollInterval: r.get(V.SLUICE_QUEUE_POLL_INTERVAL),
    runnerImage: r.get(V.SLUICE_RUNNER_IMAGE),
    registrationInterval: r.get(V.EXECUTOR_REGISTRATION_INTERVAL),
    standbyRunners: r.get(V.SLUICE_STANDBY_RUNNERS),
    processTaskUser: processTaskUser(r, options.taskUserHost ?? REAL_HOST),
    runtimeDefaults: { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) },
  };
}

function dockerSettings(r: EnvReader, instance: InstanceSettings): DockerSettings {
  const ownerId = r.get(V.DOCKER_EXECUTOR_OWNER_ID);
  return {
    ...(ownerId ? { ownerId } : {}),
    heartbeatInterval: r.get(V.DOCKER_EXECUTOR_HEARTBEAT_INTERVAL),
    maxSyncDuration: r.get(V.DOCKER_EXECUTOR_MAX_SYNC_DURATION),
    cleanupInterval: r.get(V.DOCKER_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL),
    jobWorkerInterval: r.get(V.DOCKER_EXECUTOR_JOB_WORKER_INTERVAL) ?? instance.queuePollInterval,
    network: r.get(V.DOCKER_EXECUTOR_NETWORK),
  };
}

function k8sSettings(
  r: EnvReader,
  instance: InstanceSettings,
  options: { serverAddrDefault: string; ownerIdRequired: boolean },
): K8sSettings {
  const ownerId = k8sOwnerId(r, options.ownerIdRequired);
  return {
    namespace: r.get(V.K8S_EXECUTOR_NAMESPACE),
    ...(ownerId ? { ownerId } : {}),
    serverAddr: r.get(V.K8S_EXECUTOR_SERVER_ADDR) ?? options.serverAddrDefault,
    jobWorkerInterval: r.get(V.K8S_EXECUTOR_JOB_WORKER_INTERVAL) ?? instance.queuePollInterval,
    cleanupInterval: r.get(V.K8S_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL),
    podPendingTimeout: r.get(V.K8S_EXECUTOR_POD_PENDING_TIMEOUT),
    defaultCpu: r.get(V.K8S_EXECUTOR_DEFAULT_CPU),
    defaultMemory: r.get(V.K8S_EXECUTOR_DEFAULT_MEMORY),
    maxJobs: r.get(V.SLUICE_K8S_MAX_JOBS),
  };
}

/** What the user CLI reads from the environment; unset variables are undefined (flags and the config file may fill them). */
export interface ClientEnv {
  url?: string;
  token?: string;
}

/** SLUICE_URL and SLUICE_TOKEN, validated; throws a ConfigError naming a bad one. */
export function parseClientEnv(env: Env = process.env): ClientEnv {
  const reader = new EnvReader(env);
  const url = reader.get(V.SLUICE_URL);
  const token = reader.get(V.SLUICE_TOKEN);
  return reader.finish('cli', { ...(url ? { url } : {}), ...(token ? { token } : {}) });
}
