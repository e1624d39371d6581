import { createHash } from 'node:crypto';
import type {
  V1Container,
  V1EnvVar,
  V1Job,
  V1ResourceRequirements,
  V1Secret,
  V1Toleration,
} from '@kubernetes/client-node';
import type { ClaimedTaskRun, Resources } from '@sluice/protocol';
import { INJECTED_DIR, INJECTED_RUNNER_COMMAND, RUNNER_IMAGE_BINARY } from '../docker-runner-injection';
import { TaskRunStartError } from '../start-error';
import { SYNC_CONTAINERS, syncPodParts, type SyncPodParts } from './sync-pod';

/**
 * Labels of every Job, pod and Secret of the kubernetes executor (docs/decisions.md §2). Label
 * values are limited to 63 characters of [A-Za-z0-9-_.], so what may not fit (execution, task,
 * pool) is kept in annotations; none of them holds a secret.
 */
export const KUBE_LABELS = {
  owner: 'sluice.io/owner',
  taskRun: 'sluice.io/task-run',
  attempt: 'sluice.io/attempt',
} as const;

export const KUBE_ANNOTATIONS = {
  fence: 'sluice.io/fence',
  execution: 'sluice.io/execution',
  task: 'sluice.io/task',
  pool: 'sluice.io/pool',
  timeoutMs: 'sluice.io/timeout-ms',
} as const;

/** The Secret key that holds the run token (the only key of the Secret). */
export const RUN_TOKEN_KEY = 'run-token';
/** The task container's name, as pod status and errors name it. */
export const TASK_CONTAINER = 'task';
/** The init container that writes the runner into the emptyDir. */
export const RUNNER_INSTALL_CONTAINER = 'sluice-runner-install';
/** Seconds past the task timeout before the cluster stops the pod: the runner reports its own timeout first. */
export const DEADLINE_GRACE_SECONDS = 60;

/**
 * Deterministic per attempt (a second create of one attempt collides instead of running twice),
 * DNS-1123 and at most 63 characters: the Job controller puts it in the pod's `job-name` label.
 * The hash keeps two task run IDs with one 8-character prefix apart.
 */
export function jobName(run: Pick<ClaimedTaskRun, 'taskRunId' | 'attempt'>): string {
  const prefix = run.taskRunId
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 8);
  const hash = createHash('sha256').update(`${run.taskRunId}\n${run.attempt}`).digest('hex').slice(0, 10);
  return `sluice-${prefix}-${run.attempt}-${hash}`.slice(0, 63);
}

export function secretName(job: string): string {
  return `${job}-token`;
}

export function kubeLabels(
  ownerId: string,
  run: Pick<ClaimedTaskRun, 'taskRunId' | 'attempt'>,
): Record<string, string> {
  return {
    [KUBE_LABELS.owner]: ownerId,
    [KUBE_LABELS.taskRun]: run.taskRunId,
    [KUBE_LABELS.attempt]: String(run.attempt),
  };
}

function kubeAnnotations(run: ClaimedTaskRun): Record<string, string> {
  return {
    [KUBE_ANNOTATIONS.fence]: String(run.fence),
    [KUBE_ANNOTATIONS.execution]: run.executionId,
    [KUBE_ANNOTATIONS.task]: run.taskId,
    [KUBE_ANNOTATIONS.pool]: run.executor.pool,
    [KUBE_ANNOTATIONS.timeoutMs]: String(run.timeoutMs),
  };
}

/** The Secret of one Job: the run token and nothing else. The owner reference is added once the Job exists. */
export function secretManifest(ownerId: string, run: ClaimedTaskRun): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secretName(jobName(run)), labels: kubeLabels(ownerId, run) },
    type: 'Opaque',
    stringData: { [RUN_TOKEN_KEY]: run.runToken },
  };
}

export interface JobManifestInput {
  run: ClaimedTaskRun;
  ownerId: string;
  /** K8S_EXECUTOR_SERVER_ADDR: the pod's SLUICE_API_URL. */
  runnerApiUrl: string;
  /** SLUICE_RUNNER_IMAGE: the init container's image. */
  runnerImage: string;
  /** PIPELINE_RUNTIME_DEFAULT_*, else K8S_EXECUTOR_DEFAULT_*. */
  defaultResources: Resources;
}

/** The task's `resources`, else the defaults, field by field; requests equal limits (a predictable placement). */
export function resourceRequirements(
  resources: Resources | undefined,
  defaults: Resources,
): V1ResourceRequirements | undefined {
  const amounts: Record<string, string> = {};
  const cpu = resources?.cpu ?? defaults.cpu;
  const memory = resources?.memory ?? defaults.memory;
  if (cpu) amounts.cpu = cpu;
  if (memory) amounts.memory = memory;
  if (Object.keys(amounts).length === 0) return undefined;
  return { requests: { ...amounts }, limits: { ...amounts } };
}

/**
 * The Job of one attempt. Retries are Sluice's (backoffLimit 0, restartPolicy Never); the
 * deadline stops overrunning work even while Sluice is down. The run token reaches the pod only
 * through a secretKeyRef, so the Job's definition holds no secret value.
 */
export function jobManifest(input: JobManifestInput): V1Job {
  const { run } = input;
  const name = jobName(run);
  const labels = kubeLabels(input.ownerId, run);
  const resources = resourceRequirements(run.executor.resources, input.defaultResources);
  const env: V1EnvVar[] = [
    { name: 'SLUICE_API_URL', value: input.runnerApiUrl },
    { name: 'SLUICE_TASK_RUN_ID', value: run.taskRunId },
    {
      name: 'SLUICE_RUN_TOKEN',
      valueFrom: { secretKeyRef: { name: secretName(name), key: RUN_TOKEN_KEY } },
    },
    // An image's NODE_OPTIONS must not change how the runner starts.
    { name: 'NODE_OPTIONS', value: '' },
  ];
  const pod =
    run.task.type === 'sync'
      ? syncPodParts({ run, runnerImage: input.runnerImage, runnerEnv: env, resources })
      : taskPodParts(input, env, resources);
  const serviceAccount = run.executor.service_account;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, labels, annotations: kubeAnnotations(run) },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: Math.ceil(run.timeoutMs / 1000) + DEADLINE_GRACE_SECONDS,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          // Task pods hold their run token only, no credentials of the cluster, unless a service account is asked for.
          ...(serviceAccount
            ? { serviceAccountName: serviceAccount }
            : { automountServiceAccountToken: false }),
          ...(run.executor.node_selector ? { nodeSelector: run.executor.node_selector } : {}),
          ...(run.executor.tolerations ? { tolerations: run.executor.tolerations as V1Toleration[] } : {}),
          ...(pod.install
            ? {
                initContainers: [
                  {
                    name: RUNNER_INSTALL_CONTAINER,
                    image: input.runnerImage,
                    command: [RUNNER_IMAGE_BINARY, 'runner-install', `/${INJECTED_DIR}`, ...pod.install.args],
                    volumeMounts: pod.install.volumeMounts,
                    terminationMessagePolicy: 'FallbackToLogsOnError',
                  },
                ],
              }
            : {}),
          ...(pod.volumes ? { volumes: pod.volumes } : {}),
          containers: pod.containers,
        },
      },
    },
  };
}

/** The one task container of any task but a sync, and the runner's emptyDir when it is injected. */
function taskPodParts(
  input: JobManifestInput,
  env: V1EnvVar[],
  resources: V1ResourceRequirements | undefined,
): Pick<SyncPodParts, 'containers' | 'volumes'> & { install: SyncPodParts['install'] | null } {
  const { run } = input;
  const image = run.executor.image;
  if (!image) {
    throw new TaskRunStartError('error', `task run ${run.taskRunId}: a kubernetes task needs executor.image`);
  }
  const inject = run.executor.inject_runner !== false;
  const mount = { name: INJECTED_DIR, mountPath: `/${INJECTED_DIR}` };
  const task: V1Container = {
    name: TASK_CONTAINER,
    image,
    command: inject ? [...INJECTED_RUNNER_COMMAND] : ['sluice', 'exec'],
    env,
    // A crash without a message still says something: the log tail.
    terminationMessagePolicy: 'FallbackToLogsOnError',
    ...(resources ? { resources } : {}),
    ...(inject ? { volumeMounts: [mount] } : {}),
  };
  if (!inject) return { containers: [task], install: null };
  return {
    containers: [task],
    install: { args: [], volumeMounts: [mount] },
    volumes: [{ name: INJECTED_DIR, emptyDir: {} }],
  };
}

/** What a Job's labels and annotations say about its task run; null when they name none. */
export function taskRunOfJob(job: V1Job): ClaimedTaskRun | null {
  const labels = job.metadata?.labels ?? {};
  const notes = job.metadata?.annotations ?? {};
  const taskRunId = labels[KUBE_LABELS.taskRun];
  const attempt = Number(labels[KUBE_LABELS.attempt]);
  const fence = Number(notes[KUBE_ANNOTATIONS.fence]);
  if (!taskRunId || !Number.isInteger(attempt) || attempt < 1 || !Number.isInteger(fence)) return null;
  // The task container, or a sync's runner container (a sync's executor.image is the runner's).
  const image = job.spec?.template.spec?.containers.find(
    (c) => c.name === TASK_CONTAINER || c.name === SYNC_CONTAINERS.runner,
  )?.image;
  return {
    taskRunId,
    executionId: notes[KUBE_ANNOTATIONS.execution] ?? '',
    taskId: notes[KUBE_ANNOTATIONS.task] ?? '',
    attempt,
    fence,
    executor: {
      type: 'kubernetes',
      pool: notes[KUBE_ANNOTATIONS.pool] ?? 'default',
      ...(image ? { image } : {}),
    },
    timeoutMs: Number(notes[KUBE_ANNOTATIONS.timeoutMs]) || 1,
    task: {},
    // The token stays in the Job's Secret; the executor never needs it again.
    runToken: '',
  };
}
