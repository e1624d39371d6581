import type Docker from 'dockerode';
import type { ClaimedTaskRun, Resources } from '@sluice/protocol';
import { errorMessage, isStaleFenceError } from './errors';
import type { Executor, ExecutorContext, ExecutorOutcome, ExecutorStatus, TaskRunHandle } from './executor';
import { containerSpec, type ContainerSpecInput } from './docker-container-spec';
import { ensureImage } from './docker-image';
import { containerName, DOCKER_LABELS, taskRunFromLabels } from './docker-labels';
import { RunnerInjection } from './docker-runner-injection';
import {
  createReplacing,
  isDockerStatus,
  removeContainer,
  stopContainer,
  waitForExit,
} from './docker-containers';
import { prepareConnectorImage } from './docker-connector-image';
import { createSyncAttempt, removeSyncAttempt, startSyncAttempt, SYNC_ROLE_RUNNER } from './docker-sync';

export interface DockerExecutorOptions {
  /** A client for the engine (DOCKER_HOST). */
  docker: Docker;
  /** DOCKER_EXECUTOR_OWNER_ID: the `sluice.io/owner` label of every container. */
  ownerId: string;
  /** SLUICE_RUNNER_IMAGE: where the injected runner is copied from. */
  runnerImage: string;
  /** DOCKER_EXECUTOR_NETWORK; default `bridge`. */
  network?: string;
  /** DOCKER_EXECUTOR_HEARTBEAT_INTERVAL; default 5 s. */
  heartbeatIntervalMs?: number;
  /** DOCKER_EXECUTOR_MAX_SYNC_DURATION; 0 (default) = no limit. */
  maxDurationMs?: number;
  /** PIPELINE_RUNTIME_DEFAULT_CPU / _MEMORY. */
  runtimeDefaults?: Resources;
  /** Grace of a stop before the engine kills the container; spec: 10 s. */
  stopGraceSeconds?: number;
}

/** A container found by cleanup whose task run the server still runs. */
export interface AdoptedTaskRun {
  run: ClaimedTaskRun;
  handle: TaskRunHandle;
}

interface DockerTaskRun {
  taskRunId: string;
  attempt: number;
  fence: number;
  /** A sync: the connector containers and the volume go with the runner's container. */
  sync: boolean;
  name: string;
  ctx: ExecutorContext;
  container: Docker.Container | null;
  outcome: Promise<ExecutorOutcome> | null;
  heartbeat: NodeJS.Timeout;
  maxDuration: NodeJS.Timeout | null;
  /** The executor already completed the task run (max_duration) or lost it to a newer claim. */
  settled: boolean;
  stopping: boolean;
  /** The container is being stopped because the task run was cancelled. */
  cancelled: boolean;
  /** A heartbeat call is still out (retrying through a server outage): the next tick skips. */
  heartbeating: boolean;
  abort: AbortController;
}

/**
 * Runs each attempt in a new container (`sluice-<task run>-<attempt>`) from
 * the task's image, with the runner injected or taken from the image. The
 * runner does the task's work and reporting; this executor creates, starts,
 * heartbeats, limits, stops and removes the container. Containers survive
 * the executor: a restarted executor adopts them (see `adopt`).
 */
export class DockerExecutor implements Executor {
  readonly type = 'docker' as const;
  private readonly docker: Docker;
  private readonly ownerId: string;
  private readonly network: string;
  private readonly heartbeatIntervalMs: number;
  private readonly maxDurationMs: number;
  private readonly runtimeDefaults: Resources;
  private readonly graceSeconds: number;
  private readonly runnerImage: string;
  private readonly injection: RunnerInjection;
  private readonly local = new Map<string, DockerTaskRun>();
  private closed = false;

  constructor(options: DockerExecutorOptions) {
    if (!options.ownerId)
      throw new Error('DockerExecutorOptions.ownerId (DOCKER_EXECUTOR_OWNER_ID) is required');
    this.docker = options.docker;
    this.ownerId = options.ownerId;
    this.network = options.network ?? 'bridge';
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 5_000;
    this.maxDurationMs = options.maxDurationMs ?? 0;
    this.runtimeDefaults = options.runtimeDefaults ?? {};
    this.graceSeconds = options.stopGraceSeconds ?? 10;
    this.runnerImage = options.runnerImage;
    this.injection = new RunnerInjection(options.docker, options.runnerImage, options.ownerId);
  }

  async start(run: ClaimedTaskRun, ctx: ExecutorContext): Promise<TaskRunHandle> {
    if (this.closed) throw new Error(`docker executor is shut down; task run ${run.taskRunId} not started`);
    if (this.local.has(run.taskRunId)) throw new Error(`task run ${run.taskRunId} already has a container`);
    // Tracked (and heartbeated) from here, so a slow pull does not look like lost work.
    const entry = this.track(run, containerName(run), ctx, run.task.type === 'sync');
    try {
      const container = entry.sync
        ? await this.startSync(run, ctx, entry)
        : await this.startTask(run, ctx, entry);
      entry.outcome = this.watch(entry, container);
      this.limitDuration(entry, this.maxDurationMs);
      ctx.log.debug('container started', { taskRunId: run.taskRunId, container: container.id });
      return { taskRunId: run.taskRunId, fence: run.fence, externalRef: container.id };
    } catch (err) {
      this.untrack(entry);
      await this.removeAttempt(entry);
      throw err;
    }
  }

  /**
   * One container. A connector task runs in its `connector.image` (the runner
   * runs the connector's command there), told the image's command when the
   * image has no AIRBYTE_ENTRYPOINT of its own (docs/connectors.md#where-it-runs).
   */
  private async startTask(run: ClaimedTaskRun, ctx: ExecutorContext, entry: DockerTaskRun) {
    const connector = await prepareConnectorImage(this.docker, run);
    const spec = containerSpec({ ...this.specInput(run, ctx), ...connector });
    if (!connector) await ensureImage(this.docker, spec.Image ?? '', run.executor.pull);
    const container = await createReplacing(this.docker, spec);
    entry.container = container;
    if (run.executor.inject_runner !== false) await this.injection.injectInto(container);
    await container.start();
    return container;
  }

  /** Three containers and a volume (docker-sync.ts); the runner's container is the task run's. */
  private async startSync(run: ClaimedTaskRun, ctx: ExecutorContext, entry: DockerTaskRun) {
    const attempt = await createSyncAttempt(this.docker, this.injection, {
      ...this.specInput(run, ctx),
      runnerImage: this.runnerImage,
    });
    entry.container = attempt.runner;
    await startSyncAttempt(attempt);
    return attempt.runner;
  }

  /** What every container of an attempt is created with (docker-container-spec.ts). */
  private specInput(run: ClaimedTaskRun, ctx: ExecutorContext): ContainerSpecInput {
    const { ownerId, network, runtimeDefaults } = this;
    return { run, ownerId, runnerApiUrl: ctx.runnerApiUrl, network, runtimeDefaults };
  }

  async wait(handle: TaskRunHandle): Promise<ExecutorOutcome> {
    const entry = this.local.get(handle.taskRunId);
    if (!entry?.outcome) {
      throw new Error(
        `task run ${handle.taskRunId} has no container here (externalRef ${handle.externalRef})`,
      );
    }
    const outcome = await entry.outcome;
    this.untrack(entry);
    // After shutdown the containers are left running for the next executor with this owner ID.
    if (!this.closed) await this.removeAttempt(entry);
    return outcome;
  }

  /** Stops the container with the grace (the runner passes the TERM to the task); `wait` removes it. */
  async cancel(handle: TaskRunHandle): Promise<void> {
    const entry = this.local.get(handle.taskRunId);
    if (entry) {
      entry.cancelled = true;
      this.stop(entry);
      return;
    }
    if (!handle.externalRef) return;
    const container = this.docker.getContainer(handle.externalRef);
    // void: cancel returns at once. A stop or removal that fails (not 404/409: the engine is down)
    // must not end the process as an unhandled rejection; the containers keep their owner label,
    // so this owner's cleanup finds them again.
    void (async () => {
      const labels = (await container.inspect().catch(() => null))?.Config.Labels;
      await stopContainer(container, this.graceSeconds);
      await removeContainer(container);
      const labelled = taskRunFromLabels(labels);
      if (labelled && labels?.[DOCKER_LABELS.role] === SYNC_ROLE_RUNNER) {
        await removeSyncAttempt(this.docker, this.ownerId, labelled);
      }
    })().catch(() => undefined);
  }

  async status(handle: TaskRunHandle): Promise<ExecutorStatus> {
    if (!handle.externalRef) return 'unknown';
    try {
      const info = await this.docker.getContainer(handle.externalRef).inspect();
      return info.State.Running ? 'running' : 'exited';
    } catch (err) {
      return isDockerStatus(err, 404) ? 'exited' : 'unknown';
    }
  }

  /** The containers keep running (their runners report to any server); only our watching ends. */
  async shutdown(): Promise<void> {
    this.closed = true;
    for (const entry of this.local.values()) {
      clearTimers(entry);
      entry.abort.abort();
    }
  }

  /**
   * Takes over a container of this owner whose task run the server still runs
   * (after a restart of the executor): heartbeats, limits and waits on it as
   * if this executor had started it. Null when it is already tracked here or
   * its labels name no task run.
   */
  adopt(container: Docker.ContainerInfo, ctx: ExecutorContext): AdoptedTaskRun | null {
    if (this.closed) return null;
    const labelled = taskRunFromLabels(container.Labels);
    if (!labelled || this.local.has(labelled.taskRunId)) return null;
    // A sync is watched through its runner's container; its connectors' go with it (removeAttempt).
    const role = container.Labels[DOCKER_LABELS.role];
    if (role !== undefined && role !== SYNC_ROLE_RUNNER) return null;
    const name = container.Names[0]?.replace(/^\//, '') ?? container.Id;
    const entry = this.track(labelled, name, ctx, role === SYNC_ROLE_RUNNER);
    const handle = this.docker.getContainer(container.Id);
    entry.container = handle;
    entry.outcome = this.watch(entry, handle);
    if (this.maxDurationMs > 0) {
      const elapsed = Date.now() - container.Created * 1000;
      this.limitDuration(entry, Math.max(1, this.maxDurationMs - elapsed));
    }
    const run: ClaimedTaskRun = {
      taskRunId: labelled.taskRunId,
      executionId: labelled.executionId,
      taskId: labelled.taskId,
      attempt: labelled.attempt,
      fence: labelled.fence,
      executor: { type: 'docker', pool: labelled.pool, image: container.Image },
      timeoutMs: labelled.timeoutMs,
      task: {},
      // The token stays with the runner in the container; the executor never needs it again.
      runToken: '',
    };
    return { run, handle: { taskRunId: run.taskRunId, fence: run.fence, externalRef: container.Id } };
  }

  /** Stops watching a task run's container without touching it (an adoption nobody took). */
  release(taskRunId: string): void {
    const entry = this.local.get(taskRunId);
    if (!entry) return;
    entry.abort.abort();
    this.untrack(entry);
  }

  /** Task runs whose container this executor watches now (cleanup must not touch them). */
  tracked(): string[] {
    return [...this.local.keys()];
  }

  /** Containers of this owner that run no task and are in use now (the runner copy in progress). */
  busyContainers(): string[] {
    return this.injection.copiesInProgress();
  }

  private track(
    run: { taskRunId: string; attempt: number; fence: number },
    name: string,
    ctx: ExecutorContext,
    sync: boolean,
  ): DockerTaskRun {
    const { taskRunId } = run;
    const entry: DockerTaskRun = {
      taskRunId,
      attempt: run.attempt,
      fence: run.fence,
      sync,
      name,
      ctx,
      container: null,
      outcome: null,
      heartbeat: setInterval(() => void this.heartbeat(entry), this.heartbeatIntervalMs),
      maxDuration: null,
      settled: false,
      stopping: false,
      cancelled: false,
      heartbeating: false,
      abort: new AbortController(),
    };
    this.local.set(taskRunId, entry);
    return entry;
  }

  private untrack(entry: DockerTaskRun): void {
    clearTimers(entry);
    if (this.local.get(entry.taskRunId) === entry) this.local.delete(entry.taskRunId);
  }

  /** The attempt's container, and for a sync its connectors' containers and its volume after it. */
  private async removeAttempt(entry: DockerTaskRun): Promise<void> {
    if (entry.container) await removeContainer(entry.container);
    if (entry.sync) await removeSyncAttempt(this.docker, this.ownerId, entry);
  }

  /** How the container ended, told the way the instance completes it when the runner reported nothing. */
  private async watch(entry: DockerTaskRun, container: Docker.Container): Promise<ExecutorOutcome> {
    const exit = await waitForExit(container, entry.abort.signal);
    if (entry.settled || exit.state === 'detached') {
      return { exitCode: exit.exitCode, signal: null, completed: true };
    }
    if (entry.cancelled) {
      return {
        exitCode: exit.exitCode,
        signal: null,
        cancelled: true,
        error: `cancelled: container ${entry.name} exited with code ${exit.exitCode ?? 'unknown'} before its runner reported a result`,
      };
    }
    const how =
      exit.state === 'gone'
        ? 'was removed'
        : exit.exitCode === 137
          ? 'was killed (exit code 137)'
          : `exited with code ${exit.exitCode}`;
    return {
      exitCode: exit.exitCode,
      signal: null,
      reason: 'lost',
      error: `container ${entry.name} ${how} without its runner reporting a result`,
    };
  }

  private stop(entry: DockerTaskRun): void {
    if (entry.stopping || !entry.container) return;
    entry.stopping = true;
    // void: cancel returns at once, wait() sees the exit; a failed stop is logged.
    void stopContainer(entry.container, this.graceSeconds).catch((err) =>
      entry.ctx.log.warn('stopping a container failed', {
        taskRunId: entry.taskRunId,
        error: errorMessage(err),
      }),
    );
  }

  /** DOCKER_EXECUTOR_MAX_SYNC_DURATION: complete FAILED/max_duration first, so the stopping runner's report is moot. */
  private limitDuration(entry: DockerTaskRun, ms: number): void {
    if (this.maxDurationMs <= 0) return;
    entry.maxDuration = setTimeout(() => {
      // void: a timer callback; the completion's failure is caught and logged inside.
      void (async () => {
        entry.settled = true;
        try {
          await entry.ctx.protocol.complete({
            taskRunId: entry.taskRunId,
            fence: entry.fence,
            state: 'FAILED',
            reason: 'max_duration',
            error: `the task run was stopped after DOCKER_EXECUTOR_MAX_SYNC_DURATION (${this.maxDurationMs} ms)`,
          });
        } catch (err) {
          if (!isStaleFenceError(err)) {
            entry.ctx.log.error('completing a task run at its max duration failed', {
              taskRunId: entry.taskRunId,
              error: errorMessage(err),
            });
          }
        }
        this.stop(entry);
      })();
    }, ms);
  }

  /** docs/decisions.md §6: the executor's own heartbeat covers pull and start; a cancel or a newer claim stops the container. */
  private async heartbeat(entry: DockerTaskRun): Promise<void> {
    if (entry.heartbeating) return;
    entry.heartbeating = true;
    try {
      const answer = await entry.ctx.protocol.heartbeat({ taskRunId: entry.taskRunId, fence: entry.fence });
      if (answer.cancel) {
        entry.cancelled = true;
        this.stop(entry);
      }
    } catch (err) {
      if (isStaleFenceError(err)) {
        entry.ctx.log.info('task run is owned by a newer claim; stopping its container', {
          taskRunId: entry.taskRunId,
        });
        entry.settled = true;
        clearInterval(entry.heartbeat);
        this.stop(entry);
        return;
      }
      entry.ctx.log.warn('docker heartbeat failed', { taskRunId: entry.taskRunId, error: errorMessage(err) });
    } finally {
      entry.heartbeating = false;
    }
  }
}

function clearTimers(entry: DockerTaskRun): void {
  clearInterval(entry.heartbeat);
  if (entry.maxDuration) clearTimeout(entry.maxDuration);
}
