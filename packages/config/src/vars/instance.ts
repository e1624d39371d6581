import { defineVar } from '../define';
import {
  cpuQuantity,
  duration,
  executorSelection,
  httpUrl,
  int,
  list,
  memoryQuantity,
  text,
} from '../schemas';
import { taskUser } from '../task-user';

/** Processes that run an instance: claim task runs and start executors. */
const INSTANCES = ['server', 'docker-executor', 'k8s-executor'] as const;
/** Instances in their own process: they reach the server through its internal API. */
const REMOTE_EXECUTORS = ['docker-executor', 'k8s-executor'] as const;

export const SLUICE_EXECUTORS = defineVar({
  name: 'SLUICE_EXECUTORS',
  schema: executorSelection(),
  default: 'auto',
  description:
    'Executors of this instance: `auto` detects them (docker when its API answers a ping, kubernetes when a Job dry run succeeds), or a comma list such as `process,kubernetes` turns on exactly those plus inline.',
  apps: INSTANCES,
});

export const SLUICE_POOLS = defineVar({
  name: 'SLUICE_POOLS',
  schema: list({ min: 1 }),
  default: 'default',
  description: 'Comma list of the pools this instance claims task runs from.',
  apps: INSTANCES,
});

export const SLUICE_WORKER_SLOTS = defineVar({
  name: 'SLUICE_WORKER_SLOTS',
  schema: int({ min: 0 }),
  default: '8',
  description:
    'Process and docker task runs a standalone server runs at once (they share the slots); on a k8s-executor whose SLUICE_EXECUTORS lists process, its process task runs. 0 claims none.',
  apps: ['server', 'k8s-executor'],
});

export const SLUICE_STANDBY_RUNNERS = defineVar({
  name: 'SLUICE_STANDBY_RUNNERS',
  schema: int({ min: 0 }),
  default: '1',
  description:
    'Runners the process executor keeps started and waiting for its next task run, so a claim skips the runner start-up; never more than the free process slots. 0 turns them off (default chosen by Sluice).',
  apps: INSTANCES,
});

export const SLUICE_PROCESS_TASK_USER = defineVar({
  name: 'SLUICE_PROCESS_TASK_USER',
  schema: taskUser(),
  default: 'nobody',
  description:
    'The user process tasks run as when this process is root: a name or uid[:gid], in a 0700 home of its own, out of reach of SLUICE_DATA_DIR (unknown: start fails; `root` keeps root). Not root: tasks share its user and what it can read; see docs/process-executor.md.',
  apps: INSTANCES,
});

export const SLUICE_K8S_MAX_JOBS = defineVar({
  name: 'SLUICE_K8S_MAX_JOBS',
  schema: int({ min: 0 }),
  default: '50',
  description:
    'Active kubernetes Jobs per pool over all instances, enforced inside the claim; 0 means no limit.',
  apps: ['server', 'k8s-executor'],
});

export const SLUICE_QUEUE_POLL_INTERVAL = defineVar({
  name: 'SLUICE_QUEUE_POLL_INTERVAL',
  schema: duration(),
  default: '1s',
  description:
    'How often an instance polls the queue; it also polls when a local task ends and when notified (default chosen by Sluice).',
  apps: INSTANCES,
});

export const SLUICE_RUNNER_IMAGE = defineVar({
  name: 'SLUICE_RUNNER_IMAGE',
  schema: text(),
  default: 'sluice:latest',
  description:
    'Image holding the runner binary, injected into docker and kubernetes tasks with inject_runner: true (default chosen by Sluice: the image built from docker/runner.Dockerfile).',
  apps: INSTANCES,
});

export const EXECUTOR_API_URL = defineVar({
  name: 'EXECUTOR_API_URL',
  schema: httpUrl(),
  description: "URL of a server's internal API, e.g. http://sluice-internal:8081. Required.",
  apps: REMOTE_EXECUTORS,
});

export const EXECUTOR_API_TOKEN = defineVar({
  name: 'EXECUTOR_API_TOKEN',
  schema: text(),
  secret: true,
  description:
    "Sent in X-Internal-Secret; the same value as the server's PIPELINE_EXECUTOR_API_TOKEN. Required.",
  apps: REMOTE_EXECUTORS,
});

export const EXECUTOR_REGISTRATION_INTERVAL = defineVar({
  name: 'EXECUTOR_REGISTRATION_INTERVAL',
  schema: duration(),
  default: '15s',
  description: 'How often an instance reports itself (ID, type, version, capacity, pools) to the server.',
  apps: INSTANCES,
});

export const PIPELINE_RUNTIME_DEFAULT_CPU = defineVar({
  name: 'PIPELINE_RUNTIME_DEFAULT_CPU',
  schema: cpuQuantity(),
  description:
    'CPU of a docker or kubernetes task whose executor block sets none (e.g. 0.5 or 500m). Default: no docker limit; K8S_EXECUTOR_DEFAULT_CPU on kubernetes.',
  apps: INSTANCES,
});

export const PIPELINE_RUNTIME_DEFAULT_MEMORY = defineVar({
  name: 'PIPELINE_RUNTIME_DEFAULT_MEMORY',
  schema: memoryQuantity(),
  description:
    'Memory of a docker or kubernetes task whose executor block sets none (e.g. 512Mi). Default: no docker limit; K8S_EXECUTOR_DEFAULT_MEMORY on kubernetes.',
  apps: INSTANCES,
});
