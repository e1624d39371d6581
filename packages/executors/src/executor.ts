import type { ClaimedTaskRun, ExecutorProtocol, ExecutorType, TaskRunReason } from '@sluice/protocol';
import type { Logger } from './logger';

/**
 * What an executor hands back from `start`: enough to wait for, cancel and
 * inspect the work later. `externalRef` is what the task run keeps (for
 * example `pid:1234`, a container ID, a Job name); null when the work has no
 * name outside this process (inline).
 */
export interface TaskRunHandle {
  taskRunId: string;
  fence: number;
  externalRef: string | null;
}

/** How the work of a task run ended, as the executor saw it. */
export interface ExecutorOutcome {
  /** Exit code of the runner (not necessarily the task's); null when it did not exit normally. */
  exitCode: number | null;
  /** Signal that ended the runner, e.g. `SIGKILL`. */
  signal: string | null;
  /**
   * True when the executor itself reported the task run's completion (inline),
   * or when nothing is left to report (a newer claim owns the task run). The
   * instance then completes nothing.
   */
  completed?: boolean;
  /** Why the work ended without a result, when the executor knows better than the exit code. */
  error?: string;
  /**
   * The reason the instance completes the task run with when nobody reported
   * a result; `error` when absent. Docker uses `lost` (a `docker kill`).
   */
  reason?: TaskRunReason;
  /**
   * The executor stopped the work for a cancel: when nobody reported a result
   * (the stop came while the runner was starting), the instance ends the task
   * run CANCELLED / `cancelled` rather than FAILED.
   */
  cancelled?: boolean;
}

/** What every executor call can use; the same in standalone and distributed layouts. */
export interface ExecutorContext {
  protocol: ExecutorProtocol;
  /** Base URL of the runner API as the runner sees it; passed to it as SLUICE_API_URL. */
  runnerApiUrl: string;
  log: Logger;
}

export type ExecutorStatus = 'running' | 'exited' | 'unknown';

/**
 * One way of running the work of a task run (docs/decisions.md#vocabulary, "executor"). The
 * instance calls `start`, records the external reference with the server,
 * then `wait`s; `cancel` may come at any time after `start` resolved.
 */
export interface Executor {
  readonly type: ExecutorType;
  /** Starts the work. Rejects when nothing was started; the instance then fails the task run. */
  start(run: ClaimedTaskRun, ctx: ExecutorContext): Promise<TaskRunHandle>;
  /** Resolves when the work has ended. Never rejects for a task failure, only for a broken handle. */
  wait(handle: TaskRunHandle): Promise<ExecutorOutcome>;
  /** Asks the work to stop; resolves once the request is delivered, not when the work has ended. */
  cancel(handle: TaskRunHandle): Promise<void>;
  status(handle: TaskRunHandle): Promise<ExecutorStatus>;
  /**
   * The instance has started and is about to claim: an executor that keeps
   * something ready ahead of claims (the process executor's standby runners)
   * starts it now, so the first claim finds it ready too.
   */
  prepare?(log: Logger): void;
  /**
   * Instance shutdown: stop everything this executor runs locally and resolve
   * once it has ended (bounded). Executors whose work survives its instance
   * (docker, kubernetes) leave it running.
   */
  shutdown?(): Promise<void>;
}

/**
 * Executor types whose work runs inside the instance's own process or its
 * children, and therefore ends with it (docs/decisions.md#work-that-ends-with-its-instance).
 */
export const EXECUTORS_ENDING_WITH_INSTANCE: ReadonlySet<ExecutorType> = new Set<ExecutorType>([
  'inline',
  'process',
]);

export function endsWithInstance(type: ExecutorType): boolean {
  return EXECUTORS_ENDING_WITH_INSTANCE.has(type);
}
