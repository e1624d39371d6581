import type Docker from 'dockerode';
import {
  DOCKER_LABELS,
  errorMessage,
  removeContainer,
  removeVolume,
  taskRunFromLabels,
  type Logger,
} from '@sluice/executors';
import type { ExecutorProtocol } from '@sluice/protocol';

export interface CleanupOptions {
  docker: Docker;
  /** DOCKER_EXECUTOR_OWNER_ID: only containers with this `sluice.io/owner` are looked at. */
  ownerId: string;
  protocol: Pick<ExecutorProtocol, 'isStillRunning'>;
  /** Called for each own container whose task run the server still runs; the executor waits on it again. */
  adopt(container: Docker.ContainerInfo): void | Promise<void>;
  /** Task runs this process already watches: neither removed nor adopted again. */
  tracked?(): Iterable<string>;
  /** Container IDs this process uses for no task run right now (a runner copy in progress): kept. */
  busy?(): Iterable<string>;
  log?: Pick<Logger, 'info' | 'warn'>;
}

export interface CleanupResult {
  /** Container IDs removed: their task run ended, is unknown to the server, or they name none. */
  removed: string[];
  /** Container IDs handed to `adopt`. */
  adopted: string[];
  /** Container IDs left alone this time: already watched here, or the server could not be asked. */
  kept: string[];
  /** Names of the volumes removed (a sync attempt's, docs/connectors.md#sync-on-docker) whose task run is not running. */
  removedVolumes: string[];
}

/**
 * docs/decisions.md §9: lists only the containers of this owner, asks the server
 * whether each one's task run is still running, removes those that are not
 * (unknown included) and adopts those that are. When the server cannot be
 * asked, the container is kept for the next pass: removing running work on a
 * network blip would lose it.
 */
export async function runCleanup(options: CleanupOptions): Promise<CleanupResult> {
  const { docker, ownerId, protocol, log } = options;
  const result: CleanupResult = { removed: [], adopted: [], kept: [], removedVolumes: [] };
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${DOCKER_LABELS.owner}=${ownerId}`] },
  });
  const watched = new Set(options.tracked?.() ?? []);
  const busy = new Set(options.busy?.() ?? []);
  for (const container of containers) {
    // The engine filtered already; checking again keeps a mis-filtering engine from costing another owner's work.
    if (container.Labels?.[DOCKER_LABELS.owner] !== ownerId) continue;
    const labelled = taskRunFromLabels(container.Labels);
    if ((labelled && watched.has(labelled.taskRunId)) || busy.has(container.Id)) {
      result.kept.push(container.Id);
      continue;
    }
    let running = false;
    if (labelled) {
      try {
        running = await protocol.isStillRunning(labelled.taskRunId);
      } catch (err) {
        log?.warn('cleanup could not ask whether a task run still runs; keeping its container for now', {
          taskRunId: labelled.taskRunId,
          container: container.Id,
          error: errorMessage(err),
        });
        result.kept.push(container.Id);
        continue;
      }
    }
    if (running) {
      await options.adopt(container);
      result.adopted.push(container.Id);
      log?.info('adopted a container whose task run still runs', {
        taskRunId: labelled?.taskRunId,
        container: container.Id,
      });
      continue;
    }
    try {
      await removeContainer(docker.getContainer(container.Id));
      result.removed.push(container.Id);
      log?.info('removed a container whose task run is not running', {
        taskRunId: labelled?.taskRunId,
        container: container.Id,
      });
    } catch (err) {
      log?.warn('removing a leftover container failed', {
        container: container.Id,
        error: errorMessage(err),
      });
      result.kept.push(container.Id);
    }
  }
  await removeVolumes(options, watched, result);
  return result;
}

/**
 * The same rule for a sync attempt's volume, after the containers (a volume
 * in use cannot go): kept while its task run is watched here or still runs,
 * or while the server cannot be asked; removed otherwise.
 */
async function removeVolumes(
  options: CleanupOptions,
  watched: Set<string>,
  result: CleanupResult,
): Promise<void> {
  const { docker, ownerId, protocol, log } = options;
  const { Volumes } = await docker.listVolumes({ filters: { label: [`${DOCKER_LABELS.owner}=${ownerId}`] } });
  for (const volume of Volumes ?? []) {
    if (volume.Labels?.[DOCKER_LABELS.owner] !== ownerId) continue;
    const labelled = taskRunFromLabels(volume.Labels ?? undefined);
    if (labelled && watched.has(labelled.taskRunId)) continue;
    try {
      if (labelled && (await protocol.isStillRunning(labelled.taskRunId))) continue;
      if (await removeVolume(docker, volume.Name)) {
        result.removedVolumes.push(volume.Name);
        log?.info('removed a volume whose task run is not running', {
          taskRunId: labelled?.taskRunId,
          volume: volume.Name,
        });
      }
    } catch (err) {
      // Kept for the next pass: the server or the engine did not answer.
      log?.warn('cleanup left a volume for now', { volume: volume.Name, error: errorMessage(err) });
    }
  }
}
