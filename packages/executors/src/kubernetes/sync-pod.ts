import type {
  V1Container,
  V1EnvVar,
  V1PodSpec,
  V1ResourceRequirements,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { SYNC_DIR_ENV, SYNC_MOUNT, SYNC_ROLES, SYNC_WORK_DIR, type ClaimedTaskRun } from '@sluice/protocol';
import { INJECTED_DIR, INJECTED_RUNNER_COMMAND } from '../docker-runner-injection';
import { TaskRunStartError } from '../start-error';

/**
 * The pod of a sync task run on the kubernetes executor (docs/connectors.md#sync-on-kubernetes):
 * one Job whose pod holds the runner (the orchestrator), the source and the destination, which
 * talk through the FIFOs of a second emptyDir — the layout and the `sluice connector-pipe`
 * wrapper of the docker sync. The init container installs the runner and lays out the FIFOs;
 * every container starts the injected runner through its loader, so no image needs a shell.
 */

/** The containers' names, as pod status and errors name them. */
export const SYNC_CONTAINERS = {
  runner: 'runner',
  source: 'source',
  destination: 'destination',
} as const;

/** The emptyDir of the FIFOs, mounted at SYNC_MOUNT in all three containers and the init container. */
export const SYNC_VOLUME = 'sluice-sync';

/** A connector reference of the stored task: its image and, optionally, the command to run in it. */
function endpointOf(
  run: ClaimedTaskRun,
  role: 'source' | 'destination',
): { image: string; command: string[] | undefined } {
  const value = run.task[role] as { image?: unknown; command?: unknown } | undefined;
  const image = typeof value?.image === 'string' && value.image.length > 0 ? value.image : undefined;
  if (!image) {
    throw new TaskRunStartError(
      'invalid_task',
      `task run ${run.taskRunId}: a sync on the kubernetes executor needs ${role}.image`,
    );
  }
  const command =
    Array.isArray(value?.command) && value.command.every((a) => typeof a === 'string')
      ? (value.command as string[])
      : undefined;
  return { image, command };
}

export interface SyncPodInput {
  run: ClaimedTaskRun;
  /** SLUICE_RUNNER_IMAGE: the init container's, and the runner's when the task names no executor.image. */
  runnerImage: string;
  /** The task container's env of any Job (API URL, task run ID, the token's secretKeyRef). */
  runnerEnv: V1EnvVar[];
  resources: V1ResourceRequirements | undefined;
}

export interface SyncPodParts extends Pick<V1PodSpec, 'volumes' | 'containers'> {
  /** What the init container adds to `runner-install /sluice-bin`: the FIFO layout, and the emptyDir it goes into. */
  install: { args: string[]; volumeMounts: V1VolumeMount[] };
}

/**
 * The init container's part, the volumes and the three containers. Only the runner gets the run token;
 * the connectors get no token and no secret: their config arrives as 0600 files written by their
 * wrapper from what the runner sends through the FIFOs.
 */
export function syncPodParts(input: SyncPodInput): SyncPodParts {
  const { run } = input;
  const bin = { name: INJECTED_DIR, mountPath: `/${INJECTED_DIR}` };
  const sync = { name: SYNC_VOLUME, mountPath: SYNC_MOUNT };
  const common = {
    volumeMounts: [bin, sync],
    // A crash without a message still says something: the log tail.
    terminationMessagePolicy: 'FallbackToLogsOnError',
    ...(input.resources ? { resources: input.resources } : {}),
  } satisfies Partial<V1Container>;
  // The runner image's own runner starts through the injected copy too: one way for every image.
  const ownRunner = run.executor.image !== undefined && run.executor.inject_runner === false;
  const runner: V1Container = {
    name: SYNC_CONTAINERS.runner,
    image: run.executor.image ?? input.runnerImage,
    command: ownRunner ? ['sluice', 'exec'] : [...INJECTED_RUNNER_COMMAND],
    env: [
      ...input.runnerEnv,
      { name: SYNC_DIR_ENV, value: SYNC_MOUNT },
      // The runner image has no /tmp: the run dir goes into the sync emptyDir.
      { name: 'TMPDIR', value: `${SYNC_MOUNT}/${SYNC_WORK_DIR}` },
    ],
    ...common,
  };
  const wrapper = INJECTED_RUNNER_COMMAND.slice(0, -1);
  const connectors = SYNC_ROLES.map((role): V1Container => {
    const { image, command } = endpointOf(run, role);
    return {
      name: SYNC_CONTAINERS[role],
      image,
      // Without `-- command` the wrapper runs the image's AIRBYTE_ENTRYPOINT (its env is the container's).
      command: [
        ...wrapper,
        'connector-pipe',
        '--dir',
        SYNC_MOUNT,
        '--role',
        role,
        ...(command ? ['--', ...command] : []),
      ],
      // The image's NODE_OPTIONS must not change how the wrapper starts.
      env: [{ name: 'NODE_OPTIONS', value: '' }],
      ...common,
    };
  });
  return {
    install: { args: ['--sync-layout', SYNC_MOUNT], volumeMounts: [bin, sync] },
    volumes: [
      { name: INJECTED_DIR, emptyDir: {} },
      { name: SYNC_VOLUME, emptyDir: {} },
    ],
    // The runner first: it is the task run's container (its env holds the token's secretKeyRef).
    containers: [runner, ...connectors],
  };
}
