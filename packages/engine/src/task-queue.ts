import {
  failQueuedTaskRun,
  insertTaskRun,
  getOutputsOfExecution,
  listTaskRunsOfExecution,
  type ExecutionRecord,
  type TaskRunRow,
  type Transaction,
} from '@sluice/store';
import { renderTemplates, resolveExecutor, templateInputs, type Task } from '@sluice/flows';
import type { EngineSettings } from './settings';

/** The latest attempt of each task of an execution (a retry supersedes its predecessor). */
export function latestAttempts(runs: TaskRunRow[]): Map<string, TaskRunRow> {
  const latest = new Map<string, TaskRunRow>();
  for (const run of runs) {
    const seen = latest.get(run.taskId);
    if (!seen || run.attempt > seen.attempt) latest.set(run.taskId, run);
  }
  return latest;
}

const ACTIVE = new Set(['QUEUED', 'STARTING', 'RUNNING']);
export const isActive = (run: TaskRunRow): boolean => ACTIVE.has(run.state);

export function maxAttemptsOf(task: Task, execution: ExecutionRecord, settings: EngineSettings): number {
  return (
    task.retry?.maxAttempts ?? execution.definition.flow.retry?.maxAttempts ?? settings.defaultMaxAttempts
  );
}

export function backoffOf(
  task: Task,
  execution: ExecutionRecord,
  settings: EngineSettings,
  attempt: number,
): number {
  const base =
    task.retry?.backoffMs ?? execution.definition.flow.retry?.backoffMs ?? settings.defaultRetryBackoffMs;
  // Exponential per attempt, capped, so a flapping dependency is not hammered.
  return Math.min(base * 2 ** Math.max(0, attempt - 1), 10 * 60 * 1000);
}

/** What is stored as the task run's spec: the task with templates rendered; secret references stay references. */
function taskSpec(
  task: Task,
  execution: ExecutionRecord,
  outputs: Record<string, Record<string, string>>,
): Record<string, unknown> {
  const inputs = templateInputs(execution.definition.flow.inputs, execution.inputs);
  return renderTemplates({ ...task }, { outputs, inputs }) as unknown as Record<string, unknown>;
}

/**
 * Queues one attempt of a task (first attempt or retry). A template that
 * cannot be rendered becomes a FAILED task run that says why, so the user
 * sees the problem on the task rather than a stuck execution.
 */
export async function queueAttempt(
  tx: Transaction,
  execution: ExecutionRecord,
  task: Task,
  attempt: number,
  settings: EngineSettings,
  availableAt?: Date,
): Promise<TaskRunRow> {
  const { flow, namespaceExecutor } = execution.definition;
  const outputs = await getOutputsOfExecution(tx, execution.id);
  const executor = resolveExecutor(task, flow, namespaceExecutor ?? undefined);
  const timeoutMs = task.timeoutMs ?? flow.timeoutMs ?? settings.defaultTimeoutMs;
  let spec: Record<string, unknown>;
  let renderError: string | null = null;
  try {
    spec = taskSpec(task, execution, outputs);
  } catch (err) {
    spec = { ...task } as unknown as Record<string, unknown>;
    renderError = err instanceof Error ? err.message : String(err);
  }
  const row = await insertTaskRun(tx, {
    executionId: execution.id,
    taskId: task.id,
    attempt,
    maxAttempts: maxAttemptsOf(task, execution, settings),
    executorType: executor.type,
    pool: executor.pool,
    executor: executor as unknown as Record<string, unknown>,
    spec,
    timeoutMs,
    availableAt,
  });
  if (renderError === null) return row;
  await failQueuedTaskRun(tx, row.id, `cannot render templates: ${renderError}`);
  return { ...row, state: 'FAILED', reason: 'error', error: `cannot render templates: ${renderError}` };
}

/**
 * Queues every task whose dependencies all succeeded and that has no task run
 * yet, while the execution has fewer than `max_parallel` active task runs
 * (the limit applies before the claim). Returns what it queued.
 */
export async function queueReadyTasks(
  tx: Transaction,
  execution: ExecutionRecord,
  settings: EngineSettings,
): Promise<TaskRunRow[]> {
  const runs = await listTaskRunsOfExecution(tx, execution.id);
  const latest = latestAttempts(runs);
  let active = [...latest.values()].filter(isActive).length;
  const limit = execution.definition.flow.maxParallel ?? Number.POSITIVE_INFINITY;
  const queued: TaskRunRow[] = [];
  for (const task of execution.definition.flow.tasks) {
    if (active >= limit) break;
    if (latest.has(task.id)) continue;
    const deps = task.depends_on ?? [];
    if (!deps.every((d) => latest.get(d)?.state === 'SUCCEEDED')) continue;
    const row = await queueAttempt(tx, execution, task, 1, settings);
    latest.set(task.id, row);
    queued.push(row);
    if (isActive(row)) active += 1;
  }
  return queued;
}
