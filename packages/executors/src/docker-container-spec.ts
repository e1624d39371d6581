import type Docker from 'dockerode';
import type { ClaimedTaskRun, Resources } from '@sluice/protocol';
import { containerLabels, containerName } from './docker-labels';
import { containerLimits } from './docker-resources';
import { INJECTED_RUNNER_COMMAND } from './docker-runner-injection';
import { TaskRunStartError } from './start-error';

export interface ContainerSpecInput {
  run: ClaimedTaskRun;
  ownerId: string;
  runnerApiUrl: string;
  /** DOCKER_EXECUTOR_NETWORK */
  network: string;
  /** PIPELINE_RUNTIME_DEFAULT_CPU / _MEMORY */
  runtimeDefaults: Resources;
  /** The image to run instead of `executor.image`: a connector task's `connector.image`. */
  image?: string;
  /** Variables added to the three of the runner (the connector's command, the sync's pipe dir). */
  extraEnv?: string[];
}

/**
 * The create request of one attempt's container. Its env holds the three
 * runner variables and nothing else of the server (the runner fetches the
 * task and its secrets over the runner API), so `docker inspect` shows no
 * secret value; NODE_OPTIONS is set empty so an image's value cannot change
 * how the runner starts.
 */
export function containerSpec(input: ContainerSpecInput): Docker.ContainerCreateOptions {
  const { run } = input;
  const image = input.image ?? run.executor.image;
  if (!image) {
    throw new TaskRunStartError('error', `task run ${run.taskRunId}: a docker task needs executor.image`);
  }
  const inject = run.executor.inject_runner !== false;
  const [entrypoint, ...args] = inject ? INJECTED_RUNNER_COMMAND : ['sluice', 'exec'];
  return {
    name: containerName(run),
    Image: image,
    Entrypoint: [entrypoint ?? 'sluice'],
    Cmd: args,
    Env: [
      `SLUICE_API_URL=${input.runnerApiUrl}`,
      `SLUICE_RUN_TOKEN=${run.runToken}`,
      `SLUICE_TASK_RUN_ID=${run.taskRunId}`,
      'NODE_OPTIONS=',
      ...(input.extraEnv ?? []),
    ],
    Labels: containerLabels(input.ownerId, run),
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    Tty: false,
    HostConfig: {
      // The engine's init (docker-init, a static tini bind-mounted at /sbin/docker-init) is PID 1 and
      // passes a stop's SIGTERM on to the runner. Without it the runner would be PID 1, which the kernel
      // shields from signals it has no handler for yet: a cancel while the runner starts would wait out
      // the whole grace. It also reaps the task's orphans, which the runner does not.
      Init: true,
      NetworkMode: input.network,
      ...containerLimits(run.executor.resources, input.runtimeDefaults),
    },
  };
}
