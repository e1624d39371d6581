import { defineVar } from '../define';
import { cpuQuantity, duration, httpUrl, int, memoryQuantity, ownerId, text } from '../schemas';

/** The docker executor runs in `sluice docker-executor` and, embedded, in a standalone server. */
const DOCKER = ['server', 'docker-executor'] as const;
/** The kubernetes executor runs in `sluice k8s-executor` and, embedded, in a standalone server in a pod. */
const K8S = ['server', 'k8s-executor'] as const;

export const DOCKER_EXECUTOR_OWNER_ID = defineVar({
  name: 'DOCKER_EXECUTOR_OWNER_ID',
  schema: ownerId(),
  description:
    'Owner ID of the docker executor: the sluice.io/owner label of its containers and its ID in the executor list. No default: an instance that runs the docker executor does not start without it; one that does not needs none. Unique per executor sharing a Docker daemon, stable across restarts.',
  apps: DOCKER,
});

export const DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS = defineVar({
  name: 'DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS',
  schema: int({ min: 1 }),
  default: '5',
  description: 'Slots of a docker-executor: it claims a task run only while one is free.',
  apps: ['docker-executor'],
});

export const DOCKER_EXECUTOR_MAX_SYNC_DURATION = defineVar({
  name: 'DOCKER_EXECUTOR_MAX_SYNC_DURATION',
  schema: duration({ allowZero: true }),
  default: '0',
  description:
    'A docker task run still running after this long is stopped and fails with reason `max_duration`; 0 means no limit beyond the task timeout (default chosen by Sluice).',
  apps: DOCKER,
});

export const DOCKER_EXECUTOR_HEARTBEAT_INTERVAL = defineVar({
  name: 'DOCKER_EXECUTOR_HEARTBEAT_INTERVAL',
  schema: duration(),
  default: '5s',
  description:
    'How often the docker executor heartbeats its running task runs (covers image pulls and container start).',
  apps: DOCKER,
});

export const DOCKER_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL = defineVar({
  name: 'DOCKER_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL',
  schema: duration(),
  default: '60s',
  description:
    'How often the docker executor removes containers with its owner ID whose task run is no longer running; it also does so at start (default chosen by Sluice).',
  apps: DOCKER,
});

export const DOCKER_EXECUTOR_JOB_WORKER_INTERVAL = defineVar({
  name: 'DOCKER_EXECUTOR_JOB_WORKER_INTERVAL',
  schema: duration(),
  description: 'Poll interval of the docker executor. Default: SLUICE_QUEUE_POLL_INTERVAL.',
  apps: DOCKER,
});

export const DOCKER_EXECUTOR_NETWORK = defineVar({
  name: 'DOCKER_EXECUTOR_NETWORK',
  schema: text(),
  default: 'bridge',
  description:
    'Docker network of task containers (e.g. bridge, host, or a user network from which SLUICE_API_URL is reachable) (default chosen by Sluice).',
  apps: DOCKER,
});

export const K8S_EXECUTOR_NAMESPACE = defineVar({
  name: 'K8S_EXECUTOR_NAMESPACE',
  schema: text(),
  default: 'default',
  description:
    'Namespace of the Jobs and Secrets of kubernetes task runs (the chart sets the release namespace).',
  apps: K8S,
});

export const K8S_EXECUTOR_OWNER_ID = defineVar({
  name: 'K8S_EXECUTOR_OWNER_ID',
  schema: ownerId(),
  description:
    'Owner ID of the kubernetes executor (the sluice.io/owner label of its Jobs and Secrets). This or K8S_EXECUTOR_OWNER_ID_PREFIX is required, not both.',
  apps: K8S,
});

export const K8S_EXECUTOR_OWNER_ID_PREFIX = defineVar({
  name: 'K8S_EXECUTOR_OWNER_ID_PREFIX',
  schema: ownerId(),
  description:
    'Gives each StatefulSet replica its own owner ID <prefix>-<n>, n being the ordinal at the end of the hostname (HOSTNAME). The executor does not start when the hostname does not end in -<digits>.',
  apps: K8S,
});

export const K8S_EXECUTOR_SERVER_ADDR = defineVar({
  name: 'K8S_EXECUTOR_SERVER_ADDR',
  schema: httpUrl(),
  description:
    'Internal API URL that task pods call; it becomes their SLUICE_API_URL. Default: EXECUTOR_API_URL on a k8s-executor, SLUICE_API_URL on a server.',
  apps: K8S,
});

export const K8S_EXECUTOR_JOB_WORKER_INTERVAL = defineVar({
  name: 'K8S_EXECUTOR_JOB_WORKER_INTERVAL',
  schema: duration(),
  description:
    'The kubernetes executor claims at most one task run per interval. Default: SLUICE_QUEUE_POLL_INTERVAL.',
  apps: K8S,
});

export const K8S_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL = defineVar({
  name: 'K8S_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL',
  schema: duration(),
  default: '60s',
  description:
    'How often the kubernetes executor reconciles its Jobs and Secrets: deletes those of ended task runs, fails task runs whose pod crashed or cannot pull its image (default chosen by Sluice).',
  apps: K8S,
});

export const K8S_EXECUTOR_POD_PENDING_TIMEOUT = defineVar({
  name: 'K8S_EXECUTOR_POD_PENDING_TIMEOUT',
  schema: duration(),
  default: '10m',
  description:
    'A kubernetes task run whose pod stays unscheduled (PodScheduled=False, e.g. Unschedulable) or whose Job creates no pod for this long fails with the reason the cluster gives, and its Job is deleted (default chosen by Sluice).',
  apps: K8S,
});

export const K8S_EXECUTOR_DEFAULT_CPU = defineVar({
  name: 'K8S_EXECUTOR_DEFAULT_CPU',
  schema: cpuQuantity(),
  default: '500m',
  description:
    'CPU of a kubernetes task when neither its block nor PIPELINE_RUNTIME_DEFAULT_CPU sets one (default chosen by Sluice).',
  apps: K8S,
});

export const K8S_EXECUTOR_DEFAULT_MEMORY = defineVar({
  name: 'K8S_EXECUTOR_DEFAULT_MEMORY',
  schema: memoryQuantity(),
  default: '512Mi',
  description:
    'Memory of a kubernetes task when neither its block nor PIPELINE_RUNTIME_DEFAULT_MEMORY sets one (default chosen by Sluice).',
  apps: K8S,
});
