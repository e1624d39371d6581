import type Docker from 'dockerode';
import { pack } from 'tar-stream';
import {
  SYNC_DIR_ENV,
  SYNC_MOUNT,
  SYNC_ROLES,
  SYNC_WORK_DIR,
  syncVolumeLayout,
  type SyncRole,
} from '@sluice/protocol';
import { containerSpec, type ContainerSpecInput } from './docker-container-spec';
import { connectorImageConfig, syncImagesOf } from './docker-connector-image';
import { createReplacing, isDockerStatus, removeContainer } from './docker-containers';
import { ensureImage } from './docker-image';
import { containerLabels, containerName, DOCKER_LABELS } from './docker-labels';
import { containerLimits } from './docker-resources';
import {
  INJECTED_RUNNER_COMMAND,
  RUNNER_IMAGE_BINARY,
  RUNNER_IMAGE_LIB,
  type RunnerInjection,
} from './docker-runner-injection';
import { TaskRunStartError } from './start-error';

/**
 * A sync task run on the docker executor (docs/connectors.md#sync-on-docker):
 * per attempt a volume and three containers — the runner's (the task's
 * executor image, else SLUICE_RUNNER_IMAGE), the source's and the
 * destination's — all with the attempt's labels plus `sluice.io/role`. The
 * executor lays out the volume, FIFOs included, before any of them starts:
 * neither the runner (its image may hold nothing but the runner, as a
 * non-root user) nor a connector image can be relied on for a mkfifo, while
 * the engine extracts a FIFO from a tar as any other file.
 */

export const SYNC_ROLE_RUNNER = 'runner';
export type SyncContainerRole = SyncRole | typeof SYNC_ROLE_RUNNER;

/** The image's NODE_OPTIONS for the connector (the wrapper's container has it emptied); see connector-pipe. */
const CHILD_NODE_OPTIONS_ENV = 'SLUICE_CONNECTOR_NODE_OPTIONS';

/** The volume has the name of the runner's container (deterministic per attempt, as that name is). */
export const syncVolumeName = containerName;

export function syncContainerName(run: { taskRunId: string; attempt: number }, role: SyncRole): string {
  return `${containerName(run)}-${role}`;
}

export interface SyncAttemptInput extends Omit<ContainerSpecInput, 'image' | 'extraEnv'> {
  /** SLUICE_RUNNER_IMAGE: the runner's container when the task names no executor.image. */
  runnerImage: string;
}

/** The attempt's containers, created (not started): the runner's is the task run's container. */
export interface SyncAttempt {
  runner: Docker.Container;
  connectors: Docker.Container[];
}

/**
 * Creates the volume and the three containers of one sync attempt and lays
 * out the volume; the caller starts them (`startSyncAttempt`) and, on any
 * failure, removes what exists (`removeSyncAttempt`).
 */
export async function createSyncAttempt(
  docker: Docker,
  injection: RunnerInjection,
  input: SyncAttemptInput,
): Promise<SyncAttempt> {
  const { run, ownerId } = input;
  const images = syncImagesOf(run);
  if (!images) throw new Error(`task run ${run.taskRunId} is not a sync`);
  const pull = run.executor.pull;
  const commands = {} as Record<SyncRole, { command: string[]; nodeOptions: string | undefined }>;
  for (const role of SYNC_ROLES) {
    await ensureImage(docker, images[role], pull);
    const config = await connectorImageConfig(docker, images[role]);
    if (!config.command) {
      throw new TaskRunStartError(
        'invalid_task',
        `the ${role} image ${images[role]} sets no AIRBYTE_ENTRYPOINT, ENTRYPOINT or CMD: nothing to run`,
      );
    }
    commands[role] = { command: config.command, nodeOptions: config.nodeOptions };
  }

  const volume = syncVolumeName(run);
  const labels = containerLabels(ownerId, run);
  // A leftover of this attempt (an executor that died mid-start) goes first: its exit files would mislead the runner.
  await removeContainer(docker.getContainer(containerName(run)));
  await removeSyncAttempt(docker, ownerId, run);
  await docker.createVolume({ Name: volume, Labels: labels });
  const binds = [`${volume}:${SYNC_MOUNT}`];

  const spec = runnerSpec(input, binds);
  await ensureImage(docker, spec.Image ?? '', input.run.executor.image ? pull : 'if_not_present');
  const runner = await createReplacing(docker, spec);
  await runner.putArchive(await volumeLayout(), { path: SYNC_MOUNT });
  if (run.executor.image && run.executor.inject_runner !== false) await injection.injectInto(runner);

  const connectors: Docker.Container[] = [];
  for (const role of SYNC_ROLES) {
    const { command, nodeOptions } = commands[role];
    const [loader, ...loaderArgs] = INJECTED_RUNNER_COMMAND.slice(0, -1);
    const container = await createReplacing(docker, {
      name: syncContainerName(run, role),
      Image: images[role],
      Entrypoint: [
        loader!,
        ...loaderArgs,
        'connector-pipe',
        '--dir',
        SYNC_MOUNT,
        '--role',
        role,
        '--',
        ...command,
      ],
      Cmd: [],
      Env: [
        'NODE_OPTIONS=',
        ...(nodeOptions === undefined ? [] : [`${CHILD_NODE_OPTIONS_ENV}=${nodeOptions}`]),
      ],
      Labels: { ...labels, [DOCKER_LABELS.role]: role },
      HostConfig: {
        // As the runner's: tini passes a stop's TERM to the wrapper, which passes it to the connector.
        Init: true,
        NetworkMode: input.network,
        Binds: binds,
        ...containerLimits(run.executor.resources, input.runtimeDefaults),
      },
    });
    connectors.push(container);
    // A connector image knows nothing of Sluice: its container always gets the runner for the wrapper.
    await injection.injectInto(container);
  }
  return { runner, connectors };
}

/** The connectors first: their wrappers wait for the runner on the control pipes, not the other way round. */
export async function startSyncAttempt(attempt: SyncAttempt): Promise<void> {
  for (const connector of attempt.connectors) await connector.start();
  await attempt.runner.start();
}

/**
 * The runner's container: the task's container spec with the volume, the
 * pipe dir and a run dir in the volume (the runner image has no /tmp). With
 * no executor.image, the runner image runs its own runner (nothing injected).
 */
function runnerSpec(input: SyncAttemptInput, binds: string[]): Docker.ContainerCreateOptions {
  const own = input.run.executor.image === undefined;
  const spec = containerSpec({
    ...input,
    image: input.run.executor.image ?? input.runnerImage,
    extraEnv: [`${SYNC_DIR_ENV}=${SYNC_MOUNT}`, `TMPDIR=${SYNC_MOUNT}/${SYNC_WORK_DIR}`],
  });
  return {
    ...spec,
    ...(own
      ? {
          Entrypoint: [
            `${RUNNER_IMAGE_LIB}/ld-linux-x86-64.so.2`,
            '--library-path',
            RUNNER_IMAGE_LIB,
            RUNNER_IMAGE_BINARY,
          ],
          Cmd: ['exec'],
        }
      : {}),
    Labels: { ...spec.Labels, [DOCKER_LABELS.role]: SYNC_ROLE_RUNNER },
    HostConfig: { ...spec.HostConfig, Binds: binds },
  };
}

/** The shared layout (syncVolumeLayout) as a tar, every entry root's. */
async function volumeLayout(): Promise<Buffer> {
  const out = pack();
  for (const { path, type, mode } of syncVolumeLayout()) {
    out.entry({ name: type === 'directory' ? `${path}/` : path, type, mode, uid: 0, gid: 0 });
  }
  out.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of out) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Removes an attempt's connector containers and its volume (the runner's
 * container is the caller's): found by their labels, so this works as well
 * for an adopted attempt as for one this process started.
 */
export async function removeSyncAttempt(
  docker: Docker,
  ownerId: string,
  run: { taskRunId: string; attempt: number },
): Promise<void> {
  const containers = await docker.listContainers({
    all: true,
    filters: {
      label: [
        `${DOCKER_LABELS.owner}=${ownerId}`,
        `${DOCKER_LABELS.taskRun}=${run.taskRunId}`,
        `${DOCKER_LABELS.attempt}=${run.attempt}`,
      ],
    },
  });
  for (const c of containers) {
    const role = c.Labels?.[DOCKER_LABELS.role];
    if (role === 'source' || role === 'destination') await removeContainer(docker.getContainer(c.Id));
  }
  // A container whose removal the engine is still finishing holds the volume a moment longer.
  for (let i = 0; !(await removeVolume(docker, syncVolumeName(run))) && i < 25; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A volume gone already is fine; one still in use (409) is left to the owner's cleanup. */
export async function removeVolume(docker: Docker, name: string): Promise<boolean> {
  try {
    await docker.getVolume(name).remove();
    return true;
  } catch (err) {
    if (isDockerStatus(err, 404)) return true;
    if (isDockerStatus(err, 409)) return false;
    throw err;
  }
}
