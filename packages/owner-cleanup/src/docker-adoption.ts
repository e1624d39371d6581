import type Docker from 'dockerode';
import type { DockerExecutor, ExecutorContext, Logger, TaskRunHandle } from '@sluice/executors';
import type { ClaimedTaskRun, ExecutorProtocol } from '@sluice/protocol';
import { startCleanupLoop, type CleanupLoop } from './cleanup-loop';

/** What adopted work is handed to: the instance, which gives it a slot (see Instance.adopt). */
export interface AdoptionTarget {
  adopt(run: ClaimedTaskRun, handle: TaskRunHandle): boolean;
}

export interface DockerCleanupOptions {
  docker: Docker;
  executor: DockerExecutor;
  ownerId: string;
  protocol: ExecutorProtocol;
  /** The context the executor uses for adopted work (same protocol, runner API URL and logger). */
  ctx: ExecutorContext;
  instance: AdoptionTarget;
  /** DOCKER_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL */
  intervalMs: number;
  log: Logger;
}

/**
 * The docker executor's cleanup and adoption (docs/decisions.md §9), at start
 * and every interval: leftovers of this owner are removed, and containers
 * whose task run still runs are watched again by the executor and take a slot
 * of the instance.
 */
export function startDockerCleanup(options: DockerCleanupOptions): CleanupLoop {
  const { executor, instance, ctx, log } = options;
  return startCleanupLoop({
    docker: options.docker,
    ownerId: options.ownerId,
    protocol: options.protocol,
    intervalMs: options.intervalMs,
    log,
    tracked: () => executor.tracked(),
    busy: () => executor.busyContainers(),
    adopt(container) {
      const adopted = executor.adopt(container, ctx);
      if (adopted && !instance.adopt(adopted.run, adopted.handle)) {
        // The instance is stopping: leave the container to the next executor with this owner ID.
        void executor.release(adopted.handle.taskRunId);
      }
    },
  });
}
