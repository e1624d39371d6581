import type { ExecutorSelection } from './schemas';
import type { ProcessTaskUser } from './task-user';
import type { LogLevel } from './vars/common';

export type { ProcessTaskUser } from './task-user';

/** Durations are in milliseconds throughout. */

/** The background jobs: scheduler, watchdog, retention (`sluice jobs`, or a standalone server). */
export interface SchedulingSettings {
  /** PIPELINE_JOB_SCHEDULER_INTERVAL */
  schedulerInterval: number;
  /** PIPELINE_MAX_CONCURRENT_JOBS; 0 = no limit */
  maxConcurrentJobs: number;
  /** PIPELINE_JOB_WATCHDOG_INTERVAL */
  watchdogInterval: number;
  /** PIPELINE_HEARTBEAT_TIMEOUT */
  heartbeatTimeout: number;
  /** PIPELINE_DEFAULT_MAX_ATTEMPTS */
  defaultMaxAttempts: number;
  /** PIPELINE_EXECUTOR_SILENCE_TIMEOUT */
  executorSilenceTimeout: number;
  /** SLUICE_RETENTION; 0 = keep forever */
  retention: number;
}

/** PIPELINE_RUNTIME_DEFAULT_CPU / _MEMORY: unset means "no default at this level". */
export interface RuntimeDefaults {
  cpu?: string;
  memory?: string;
}

/** What every instance (a process that claims task runs) shares. */
export interface InstanceSettings {
  /** SLUICE_EXECUTORS: 'auto', or the explicit list with 'inline' always included */
  executors: ExecutorSelection;
  /** SLUICE_POOLS */
  pools: string[];
  /** SLUICE_QUEUE_POLL_INTERVAL */
  queuePollInterval: number;
  /** SLUICE_RUNNER_IMAGE */
  runnerImage: string;
  /** EXECUTOR_REGISTRATION_INTERVAL */
  registrationInterval: number;
  /** SLUICE_STANDBY_RUNNERS; 0 = the process executor starts every runner on claim */
  standbyRunners: number;
  /**
   * SLUICE_PROCESS_TASK_USER resolved: set only when this process is root and the user is
   * not root; null = process tasks run as this process's own user.
   */
  processTaskUser: ProcessTaskUser | null;
  runtimeDefaults: RuntimeDefaults;
}

export interface DockerSettings {
  /** DOCKER_EXECUTOR_OWNER_ID; required wherever the docker executor actually runs */
  ownerId?: string;
  /** DOCKER_EXECUTOR_HEARTBEAT_INTERVAL */
  heartbeatInterval: number;
  /** DOCKER_EXECUTOR_MAX_SYNC_DURATION; 0 = no limit */
  maxSyncDuration: number;
  /** DOCKER_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL */
  cleanupInterval: number;
  /** DOCKER_EXECUTOR_JOB_WORKER_INTERVAL, else SLUICE_QUEUE_POLL_INTERVAL */
  jobWorkerInterval: number;
  /** DOCKER_EXECUTOR_NETWORK */
  network: string;
}

export interface K8sSettings {
  /** K8S_EXECUTOR_NAMESPACE */
  namespace: string;
  /** K8S_EXECUTOR_OWNER_ID, or <K8S_EXECUTOR_OWNER_ID_PREFIX>-<ordinal of the hostname> */
  ownerId?: string;
  /** K8S_EXECUTOR_SERVER_ADDR (the task pods' SLUICE_API_URL) */
  serverAddr: string;
  /** K8S_EXECUTOR_JOB_WORKER_INTERVAL, else SLUICE_QUEUE_POLL_INTERVAL */
  jobWorkerInterval: number;
  /** K8S_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL */
  cleanupInterval: number;
  /** K8S_EXECUTOR_POD_PENDING_TIMEOUT */
  podPendingTimeout: number;
  /** K8S_EXECUTOR_DEFAULT_CPU */
  defaultCpu: string;
  /** K8S_EXECUTOR_DEFAULT_MEMORY */
  defaultMemory: string;
  /** SLUICE_K8S_MAX_JOBS; 0 = no limit */
  maxJobs: number;
}

interface DaemonConfig {
  /** LOG_LEVEL */
  logLevel: LogLevel;
  /** INTERNAL_HTTP_SERVER_ADDR, `host:port` */
  internalHttpServerAddr: string;
}

export interface ServerConfig extends DaemonConfig {
  /** HTTP_SERVER_ADDR, `host:port` */
  httpServerAddr: string;
  /** SLUICE_DATA_DIR */
  dataDir: string;
  /** SLUICE_INSTANCE_ID, else the hostname */
  instanceId: string;
  /** SLUICE_DATABASE_PREPARED_STATEMENTS */
  databasePreparedStatements: boolean;
  /** SLUICE_DATABASE_URL or DB_DSN; unset only on a standalone server (→ embedded PostgreSQL) */
  databaseUrl?: string;
  /** SLUICE_MASTER_KEYS, or [SECRET_ENCRYPTION_KEY, SECRET_ENCRYPTION_KEY_PREVIOUS]; first encrypts. Empty only on a standalone server. */
  masterKeys: Buffer[];
  /** AUTH_JWT_SECRET; unset only on a standalone server (→ generated under dataDir) */
  authJwtSecret?: string;
  /** PIPELINE_EXECUTOR_API_TOKEN; unset = the executor API refuses every call */
  executorApiToken?: string;
  /** SLUICE_API_URL, else http://127.0.0.1:<internal port> (or the internal host when it is not a wildcard) */
  apiUrl: string;
  scheduling: SchedulingSettings;
  instance: InstanceSettings & {
    /** SLUICE_WORKER_SLOTS: shared by process and docker task runs */
    workerSlots: number;
  };
  docker: DockerSettings;
  k8s: K8sSettings;
}

export interface JobsConfig extends DaemonConfig {
  /** SLUICE_DATABASE_URL or DB_DSN */
  databaseUrl: string;
  /** SLUICE_DATABASE_PREPARED_STATEMENTS */
  databasePreparedStatements: boolean;
  scheduling: SchedulingSettings;
}

export interface DockerExecutorConfig extends DaemonConfig {
  /** EXECUTOR_API_URL, no trailing slash */
  executorApiUrl: string;
  /** EXECUTOR_API_TOKEN */
  executorApiToken: string;
  /** SLUICE_API_URL, else EXECUTOR_API_URL: what runners in containers call */
  apiUrl: string;
  /** SLUICE_INSTANCE_ID, else the hostname: the ID of an instance without the docker executor */
  instanceId: string;
  instance: InstanceSettings;
  docker: DockerSettings & {
    /** DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS: the slots of this instance */
    maxConcurrentJobs: number;
  };
}

export interface K8sExecutorConfig extends DaemonConfig {
  /** EXECUTOR_API_URL, no trailing slash */
  executorApiUrl: string;
  /** EXECUTOR_API_TOKEN */
  executorApiToken: string;
  instance: InstanceSettings & {
    /** SLUICE_WORKER_SLOTS: its process task runs, when SLUICE_EXECUTORS lists process */
    workerSlots: number;
  };
  k8s: K8sSettings & { ownerId: string };
}

export interface ConfigByApp {
  server: ServerConfig;
  jobs: JobsConfig;
  'docker-executor': DockerExecutorConfig;
  'k8s-executor': K8sExecutorConfig;
}

/** Apps whose whole configuration `parseEnv` builds (the runner has `parseRunnerEnv`). */
export type DaemonApp = keyof ConfigByApp;
