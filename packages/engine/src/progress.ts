import {
  countRunningExecutionsOfFlow,
  emitEvent,
  hasLaterAttempt,
  listTaskRunsOfExecution,
  lockExecution,
  lockFlowForConcurrency,
  lockQueuedExecutionsOfFlow,
  setExecutionState,
  type ExecutionRecord,
  type NamespaceKey,
  type TaskRunRow,
  type Transaction,
} from '@sluice/store';
import type { EngineSettings } from './settings';
import { backoffOf, isActive, latestAttempts, queueAttempt, queueReadyTasks } from './task-queue';

/** What a transaction changed that the caller must announce after commit. */
export interface ProgressEffects {
  queuedAny: boolean;
  /** Events were written: local consumers should look at once. */
  eventsEmitted?: boolean;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/**
 * Starts executions of a flow that wait for a concurrency slot (oldest
 * first). The flow's `concurrency` applies before any of their task runs is
 * queued.
 */
export async function startWaitingExecutions(
  tx: Transaction,
  ns: NamespaceKey,
  flowId: string,
  settings: EngineSettings,
  effects: ProgressEffects,
): Promise<void> {
  await lockFlowForConcurrency(tx, ns, flowId);
  const candidates = await lockQueuedExecutionsOfFlow(tx, ns, flowId, 1000);
  if (candidates.length === 0) return;
  let free = Number.POSITIVE_INFINITY;
  const limit = candidates[0]!.definition.flow.concurrency;
  if (limit !== undefined) free = limit - (await countRunningExecutionsOfFlow(tx, ns, flowId));
  for (const execution of candidates) {
    if (free <= 0) break;
    free -= 1;
    await setExecutionState(tx, execution.id, 'RUNNING');
    const running = { ...execution, state: 'RUNNING' as const };
    const queued = await queueReadyTasks(tx, running, settings);
    if (queued.length > 0) effects.queuedAny = true;
    await settleExecution(tx, running, settings, effects);
  }
}

/**
 * Re-evaluates a RUNNING execution (its row must be locked by the caller):
 * queues what became ready, and ends it when nothing is active any more.
 * A permanently failed task stops new tasks from being queued; running ones
 * finish first.
 */
export async function settleExecution(
  tx: Transaction,
  execution: ExecutionRecord,
  settings: EngineSettings,
  effects: ProgressEffects,
): Promise<void> {
  if (execution.state !== 'RUNNING') return;
  let latest = latestAttempts(await listTaskRunsOfExecution(tx, execution.id));
  const failed = (runs: Iterable<TaskRunRow>) =>
    [...runs].some((r) => r.state === 'FAILED' || r.state === 'CANCELLED');
  if (!execution.cancelRequested && !failed(latest.values())) {
    const queued = await queueReadyTasks(tx, execution, settings);
    if (queued.length > 0) {
      effects.queuedAny = effects.queuedAny || queued.some(isActive);
      latest = latestAttempts(await listTaskRunsOfExecution(tx, execution.id));
    }
  }
  if ([...latest.values()].some(isActive)) return;
  const tasks = execution.definition.flow.tasks;
  let state: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  if (execution.cancelRequested) state = 'CANCELLED';
  else if (tasks.every((t) => latest.get(t.id)?.state === 'SUCCEEDED')) state = 'SUCCEEDED';
  else state = 'FAILED';
  await setExecutionState(tx, execution.id, state);
  await emitEvent(tx, { kind: 'execution.ended', payload: { executionId: execution.id } });
  effects.eventsEmitted = true;
  await startWaitingExecutions(tx, execution, execution.flowId, settings, effects);
}

/**
 * After a task run ended (by its runner, its executor, the watchdog or a
 * shutdown): queue a retry while attempts are left, then settle the execution.
 * The caller holds the execution row lock.
 */
export async function afterTaskRunEnded(
  tx: Transaction,
  run: TaskRunRow,
  settings: EngineSettings,
  effects: ProgressEffects,
): Promise<void> {
  const execution = await lockExecution(tx, run.executionId);
  if (!execution || TERMINAL.has(execution.state)) return;
  // invalid_task: the task cannot run as given, so every attempt would fail the same way.
  const retryable =
    run.state === 'FAILED' &&
    run.reason !== 'cancelled' &&
    run.reason !== 'invalid_task' &&
    !execution.cancelRequested;
  if (retryable && run.attempt < run.maxAttempts) {
    const task = execution.definition.flow.tasks.find((t) => t.id === run.taskId);
    // Events arrive at least once: a retry queued by an earlier delivery is not queued again.
    if (await hasLaterAttempt(tx, run)) return;
    if (task) {
      const delay = backoffOf(task, execution, settings, run.attempt);
      const retry = await queueAttempt(
        tx,
        execution,
        task,
        run.attempt + 1,
        settings,
        new Date(Date.now() + delay),
      );
      if (isActive(retry)) effects.queuedAny = true;
      return;
    }
  }
  await settleExecution(tx, execution, settings, effects);
}
