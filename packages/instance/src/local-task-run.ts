import type { ClaimedTaskRun, CompletionRequest, ExecutorProtocol, TaskRunReason } from '@sluice/protocol';
import {
  errorMessage,
  isStaleFenceError,
  startFailureReason,
  type Executor,
  type ExecutorContext,
  type ExecutorOutcome,
  type TaskRunHandle,
  type Logger,
} from '@sluice/executors';

/** CompletionRequest's limit on `error`: longer messages are cut rather than refused. */
const COMPLETION_ERROR_MAX_CHARS = 8192;

/** One task run this instance claimed, from claim to the end of its work. */
export interface LocalTaskRun {
  run: ClaimedTaskRun;
  executor: Executor;
  slotGroup: string;
  /** Set once `executor.start` resolved. */
  handle: TaskRunHandle | null;
  /** The server asked for a cancel; delivered as soon as there is a handle. */
  cancelRequested: boolean;
  cancelDelivered: boolean;
  /** The instance already completed it (instance_shutdown): the executor's outcome changes nothing. */
  endedByInstance: boolean;
  /** A newer claim owns the task run (stale fence): nothing of ours may be written any more. */
  endedElsewhere: boolean;
}

export interface LifecycleDeps {
  protocol: ExecutorProtocol;
  ctx: ExecutorContext;
  log: Logger;
}

/** Why a task run ended without a result, worded for the user who reads it on the task run. */
export function noResultMessage(outcome: ExecutorOutcome): string {
  const how = outcome.signal
    ? `was killed by ${outcome.signal}`
    : `exited with code ${outcome.exitCode ?? 'unknown'}`;
  return `runner ${how} without reporting a result`;
}

/**
 * start → markStarted → wait → (when nobody reported a result) FAILED. Never
 * rejects: every failure is completed on the task run or logged with its id.
 */
export async function runLocalTaskRun(local: LocalTaskRun, deps: LifecycleDeps): Promise<void> {
  const { run, executor } = local;
  let handle: TaskRunHandle;
  try {
    handle = await executor.start(run, deps.ctx);
  } catch (err) {
    deps.log.error('starting a task run failed', {
      taskRunId: run.taskRunId,
      executor: executor.type,
      error: errorMessage(err),
    });
    if (!local.endedByInstance)
      await failTaskRun(
        run,
        `could not start the task run: ${errorMessage(err)}`,
        deps,
        startFailureReason(err),
      );
    return;
  }
  local.handle = handle;

  if (local.endedByInstance) {
    // The instance shut down while the work was starting: stop it at once.
    await deliverCancel(local, deps);
  } else {
    try {
      await deps.protocol.markStarted({
        taskRunId: run.taskRunId,
        fence: run.fence,
        externalRef: handle.externalRef,
      });
    } catch (err) {
      if (isStaleFenceError(err)) {
        deps.log.info('task run ended elsewhere before its start was recorded; stopping the work', {
          taskRunId: run.taskRunId,
        });
        local.endedElsewhere = true;
        local.cancelRequested = true;
      } else {
        // The runner reports its own progress; a lost markStarted only loses the external reference.
        deps.log.warn('recording the start of a task run failed', {
          taskRunId: run.taskRunId,
          error: errorMessage(err),
        });
      }
    }
    if (local.cancelRequested) await deliverCancel(local, deps);
  }
  await awaitOutcome(local, handle, deps);
}

/**
 * A task run whose work an executor took over after a restart (docker
 * adoption): it was started long ago, so only the waiting part is left.
 */
export async function runAdoptedTaskRun(local: LocalTaskRun, deps: LifecycleDeps): Promise<void> {
  if (!local.handle) throw new Error(`adopted task run ${local.run.taskRunId} has no handle`);
  await awaitOutcome(local, local.handle, deps);
}

/** wait → (when nobody reported a result) CANCELLED when the executor stopped it for a cancel, else FAILED with the executor's reason. */
async function awaitOutcome(local: LocalTaskRun, handle: TaskRunHandle, deps: LifecycleDeps): Promise<void> {
  const { run, executor } = local;
  let outcome: ExecutorOutcome;
  try {
    outcome = await executor.wait(handle);
  } catch (err) {
    deps.log.error('waiting for a task run failed', {
      taskRunId: run.taskRunId,
      error: errorMessage(err),
    });
    outcome = {
      exitCode: null,
      signal: null,
      error: `lost track of the task run's work: ${errorMessage(err)}`,
    };
  }
  if (outcome.completed || local.endedByInstance || local.endedElsewhere) return;
  const message = outcome.error ?? noResultMessage(outcome);
  if (outcome.cancelled) {
    const error = message.slice(0, COMPLETION_ERROR_MAX_CHARS);
    await completeQuietly(run, { state: 'CANCELLED', reason: 'cancelled', error }, deps);
    return;
  }
  await failTaskRun(run, message, deps, outcome.reason);
}

/** Sends the cancel once; a failure is logged, the runner still learns it from its heartbeat. */
export async function deliverCancel(local: LocalTaskRun, deps: LifecycleDeps): Promise<void> {
  if (!local.handle || local.cancelDelivered) return;
  local.cancelDelivered = true;
  try {
    await local.executor.cancel(local.handle);
  } catch (err) {
    deps.log.warn('cancelling a task run failed', {
      taskRunId: local.run.taskRunId,
      error: errorMessage(err),
    });
  }
}

/** FAILED (reason `error` unless given); a task run that already ended (applied=false) or moved on (stale fence) is fine. */
export function failTaskRun(
  run: ClaimedTaskRun,
  message: string,
  deps: LifecycleDeps,
  reason: TaskRunReason = 'error',
): Promise<void> {
  return completeQuietly(
    run,
    { state: 'FAILED', reason, error: message.slice(0, COMPLETION_ERROR_MAX_CHARS) },
    deps,
  );
}

export async function completeQuietly(
  run: ClaimedTaskRun,
  completion: Omit<CompletionRequest, 'taskRunId' | 'fence'>,
  deps: LifecycleDeps,
): Promise<void> {
  try {
    const answer = await deps.protocol.complete({
      taskRunId: run.taskRunId,
      fence: run.fence,
      ...completion,
    });
    if (!answer.applied)
      deps.log.debug('task run had already ended', {
        taskRunId: run.taskRunId,
        state: answer.state,
      });
  } catch (err) {
    if (isStaleFenceError(err)) {
      deps.log.debug('task run is owned by a newer claim', {
        taskRunId: run.taskRunId,
      });
      return;
    }
    deps.log.error('completing a task run failed', {
      taskRunId: run.taskRunId,
      state: completion.state,
      error: errorMessage(err),
    });
  }
}
