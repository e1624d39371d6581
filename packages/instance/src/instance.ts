import type { ClaimedTaskRun, ExecutorType } from '@sluice/protocol';
import {
  endsWithInstance,
  errorMessage,
  settlesWithin,
  type Executor,
  type ExecutorContext,
  type TaskRunHandle,
} from '@sluice/executors';
import {
  completeQuietly,
  deliverCancel,
  failTaskRun,
  runAdoptedTaskRun,
  runLocalTaskRun,
  type LifecycleDeps,
  type LocalTaskRun,
} from './local-task-run';
import { buildRegistration, resolveSlotGroups, type InstanceOptions, type SlotGroupConfig } from './options';

export interface Instance {
  /** Registers, then claims on the poll timers; resolves after the first registration attempt and claim pass began. */
  start(): Promise<void>;
  /** Stops claiming; ends local process/inline task runs with instance_shutdown; docker/kubernetes work continues. */
  stop(reason: 'shutdown'): Promise<void>;
  /** New queued work: claim now rather than at the next poll. */
  wake(): void;
  /** Task runs this instance is running now. */
  running(): ClaimedTaskRun[];
  /**
   * Takes over work that an executor found still running after a restart
   * (docker adoption, docs/decisions.md §9): it takes a slot of its executor's
   * group and is waited on like a claimed task run. False when the instance
   * already runs it, is stopped, or has no such executor.
   */
  adopt(run: ClaimedTaskRun, handle: TaskRunHandle): boolean;
}

interface SlotGroupState {
  config: SlotGroupConfig;
  running: Set<string>;
  /** The claim pass in progress; requests that arrive meanwhile set `again`. */
  pass: Promise<void> | null;
  again: boolean;
}

const SHUTDOWN_COMPLETION = {
  state: 'FAILED',
  reason: 'instance_shutdown',
  error: 'the instance shut down',
} as const;

/** ClaimRequest.limit's upper bound. */
const MAX_CLAIM = 100;

export function createInstance(options: InstanceOptions): Instance {
  const { protocol, log, metrics } = options;
  const groups: SlotGroupState[] = resolveSlotGroups(options.slotGroups, options.executors).map((config) => ({
    config,
    running: new Set(),
    pass: null,
    again: false,
  }));
  const registration = buildRegistration(
    options,
    groups.map((g) => g.config),
  );
  const executors = new Map<ExecutorType, Executor>(options.executors.map((e) => [e.type, e]));
  const ctx: ExecutorContext = {
    protocol,
    runnerApiUrl: options.runnerApiUrl,
    log,
  };
  const deps: LifecycleDeps = { protocol, ctx, log };
  const local = new Map<string, LocalTaskRun>();
  const done = new Map<string, Promise<void>>();
  const timers: NodeJS.Timeout[] = [];
  let started = false;
  let stopped = false;
  let stopping: Promise<void> | null = null;
  let registering = false;
  let checkingCancels = false;

  async function register(): Promise<void> {
    if (registering || stopped) return;
    registering = true;
    try {
      await protocol.register(registration);
    } catch (err) {
      log.warn('instance registration failed; retrying on the next interval', {
        error: errorMessage(err),
      });
    } finally {
      registering = false;
    }
  }

  function freeSlots(group: SlotGroupState): number {
    const { slots, claimBatch = 1 } = group.config;
    const free = slots === null ? claimBatch : slots - group.running.size;
    return Math.max(0, Math.min(free, MAX_CLAIM));
  }

  /** Claims now, or once more right after the pass in progress; any number of requests meanwhile make one pass. */
  function requestClaim(group: SlotGroupState): void {
    if (stopped || !started) return;
    if (group.pass) {
      group.again = true;
      return;
    }
    group.pass = (async () => {
      do {
        group.again = false;
        await claimOnce(group);
      } while (group.again && !stopped);
    })()
      .catch((err) =>
        log.error('claim pass failed', {
          slotGroup: group.config.name,
          error: errorMessage(err),
        }),
      )
      .finally(() => {
        group.pass = null;
        // A request that came after the loop's last check but before this point would be lost otherwise.
        if (group.again) requestClaim(group);
      });
  }

  async function claimOnce(group: SlotGroupState): Promise<void> {
    const limit = freeSlots(group);
    if (limit === 0) return;
    // An executor whose engine does not answer claims nothing: its task runs stay queued rather than fail.
    const executorTypes = group.config.executorTypes.filter((type) => options.claimable?.(type) ?? true);
    if (executorTypes.length === 0) return;
    let runs: ClaimedTaskRun[];
    try {
      runs = await protocol.claim({
        instanceId: options.instanceId,
        executorTypes,
        pools: options.pools,
        limit,
      });
    } catch (err) {
      log.warn('claim failed', {
        slotGroup: group.config.name,
        error: errorMessage(err),
      });
      return;
    }
    metrics?.claimed?.(group.config.name, runs.length);
    if (stopped) {
      // Claimed while the instance was stopping: hand them to the retry policy now rather than to the watchdog.
      await Promise.all(runs.map((run) => completeQuietly(run, SHUTDOWN_COMPLETION, deps)));
      return;
    }
    for (const run of runs) launch(group, run);
  }

  function launch(group: SlotGroupState, run: ClaimedTaskRun): void {
    const executor = executors.get(run.executor.type);
    if (!executor || !group.config.executorTypes.includes(run.executor.type)) {
      log.error('claimed a task run of an executor type this slot group does not run', {
        taskRunId: run.taskRunId,
        executor: run.executor.type,
        slotGroup: group.config.name,
      });
      // void: the claim loop goes on; failTaskRun logs a completion that fails (completeQuietly).
      void failTaskRun(run, `instance ${options.instanceId} has no ${run.executor.type} executor`, deps);
      return;
    }
    follow(group, run, executor, null, runLocalTaskRun);
  }

  /** Holds a slot of `group` for the task run while `lifecycle` runs, then frees it and claims again. */
  function follow(
    group: SlotGroupState,
    run: ClaimedTaskRun,
    executor: Executor,
    handle: TaskRunHandle | null,
    lifecycleOf: (entry: LocalTaskRun, deps: LifecycleDeps) => Promise<void>,
  ): void {
    const entry: LocalTaskRun = {
      run,
      executor,
      slotGroup: group.config.name,
      handle,
      cancelRequested: false,
      cancelDelivered: false,
      endedByInstance: false,
      endedElsewhere: false,
    };
    group.running.add(run.taskRunId);
    local.set(run.taskRunId, entry);
    reportRunning(executor.type);
    const lifecycle = lifecycleOf(entry, deps)
      .catch((err) =>
        log.error('task run lifecycle failed', {
          taskRunId: run.taskRunId,
          error: errorMessage(err),
        }),
      )
      .finally(() => {
        group.running.delete(run.taskRunId);
        local.delete(run.taskRunId);
        done.delete(run.taskRunId);
        reportRunning(executor.type);
        requestClaim(group); // a freed slot is filled at once, not at the next poll
      });
    done.set(run.taskRunId, lifecycle);
  }

  function reportRunning(type: ExecutorType): void {
    if (!metrics?.runningChanged) return;
    let count = 0;
    for (const entry of local.values()) if (entry.executor.type === type) count++;
    metrics.runningChanged(type, count);
  }

  async function checkCancels(): Promise<void> {
    if (checkingCancels || stopped || local.size === 0) return;
    checkingCancels = true;
    try {
      const ids = await protocol.cancelRequested([...local.keys()]);
      for (const id of ids) {
        const entry = local.get(id);
        if (!entry) continue;
        entry.cancelRequested = true;
        await deliverCancel(entry, deps); // no handle yet: the lifecycle delivers it after start
      }
    } catch (err) {
      log.warn('checking for cancel requests failed', {
        error: errorMessage(err),
      });
    } finally {
      checkingCancels = false;
    }
  }

  function every(ms: number, tick: () => void): void {
    timers.push(setInterval(tick, ms));
  }

  return {
    async start() {
      if (stopped) throw new Error(`instance ${options.instanceId} was stopped and cannot start again`);
      if (started) return;
      started = true;
      await register();
      for (const executor of options.executors) executor.prepare?.(log);
      every(options.registrationIntervalMs ?? 15_000, () => void register());
      every(options.pollIntervalMs, () => void checkCancels());
      for (const group of groups) {
        every(group.config.pollIntervalMs ?? options.pollIntervalMs, () => requestClaim(group));
        requestClaim(group);
      }
      log.info('instance started', {
        instanceId: options.instanceId,
        capacity: registration.capacity,
      });
    },

    stop(_reason: 'shutdown') {
      stopping ??= (async () => {
        stopped = true;
        timers.splice(0).forEach(clearInterval);
        const timeoutMs = options.shutdownTimeoutMs ?? 20_000;
        // A claim in flight may still hand us task runs; claimOnce ends them, so let it finish first.
        await settlesWithin(Promise.all(groups.map((g) => g.pass)), timeoutMs);
        const ending = [...local.values()].filter((entry) => endsWithInstance(entry.executor.type));
        // Complete first: the retry policy applies now, and whatever the dying runner still writes is stale.
        await Promise.all(
          ending.map((entry) => {
            entry.endedByInstance = true;
            return completeQuietly(entry.run, SHUTDOWN_COMPLETION, deps);
          }),
        );
        await Promise.all(
          options.executors.map((executor) =>
            executor.shutdown?.().catch((err) => {
              log.error('executor shutdown failed', {
                executor: executor.type,
                error: errorMessage(err),
              });
            }),
          ),
        );
        const settled = Promise.all(ending.map((entry) => done.get(entry.run.taskRunId)));
        if (!(await settlesWithin(settled, timeoutMs))) {
          log.warn('local task runs did not end within the shutdown timeout', {
            timeoutMs,
          });
        }
        log.info('instance stopped', {
          instanceId: options.instanceId,
          continuing: local.size,
        });
      })();
      return stopping;
    },

    wake() {
      for (const group of groups) requestClaim(group);
    },

    running() {
      return [...local.values()].map((entry) => entry.run);
    },

    adopt(run, handle) {
      const executor = executors.get(run.executor.type);
      const group = groups.find((g) => g.config.executorTypes.includes(run.executor.type));
      if (stopped || !executor || !group || local.has(run.taskRunId)) return false;
      follow(group, run, executor, handle, runAdoptedTaskRun);
      return true;
    },
  };
}
