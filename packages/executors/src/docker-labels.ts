import type { ClaimedTaskRun } from '@sluice/protocol';

/**
 * Labels on every container of the docker executor (docs/decisions.md §2), the
 * runner-copy container included. The owner label scopes cleanup to one executor; the others let a restarted
 * executor adopt a container without asking anyone but the server whether
 * its task run still runs. None of them holds a secret.
 */
export const DOCKER_LABELS = {
  owner: 'sluice.io/owner',
  taskRun: 'sluice.io/task-run',
  attempt: 'sluice.io/attempt',
  fence: 'sluice.io/fence',
  execution: 'sluice.io/execution',
  task: 'sluice.io/task',
  pool: 'sluice.io/pool',
  timeoutMs: 'sluice.io/timeout-ms',
  /** A sync's containers: `runner`, `source` or `destination` (docs/connectors.md#sync-on-docker). */
  role: 'sluice.io/role',
  /** Set on containers that run no task: `runner-copy`, the source of the injected runner. */
  purpose: 'sluice.io/purpose',
} as const;

/** The purpose of the short-lived container the runner is copied out of. */
export const RUNNER_COPY_PURPOSE = 'runner-copy';

/** Labels of a runner-copy container: its owner too, so the owner's cleanup removes one a crash left behind. */
export function runnerCopyLabels(ownerId: string): Record<string, string> {
  return { [DOCKER_LABELS.owner]: ownerId, [DOCKER_LABELS.purpose]: RUNNER_COPY_PURPOSE };
}

/** Deterministic per attempt, so a second create of one attempt collides instead of running twice. */
export function containerName(run: Pick<ClaimedTaskRun, 'taskRunId' | 'attempt'>): string {
  return `sluice-${run.taskRunId}-${run.attempt}`;
}

export function containerLabels(ownerId: string, run: ClaimedTaskRun): Record<string, string> {
  return {
    [DOCKER_LABELS.owner]: ownerId,
    [DOCKER_LABELS.taskRun]: run.taskRunId,
    [DOCKER_LABELS.attempt]: String(run.attempt),
    [DOCKER_LABELS.fence]: String(run.fence),
    [DOCKER_LABELS.execution]: run.executionId,
    [DOCKER_LABELS.task]: run.taskId,
    [DOCKER_LABELS.pool]: run.executor.pool,
    [DOCKER_LABELS.timeoutMs]: String(run.timeoutMs),
  };
}

/** What a container's labels say about its task run; null when they do not name one. */
export interface LabelledTaskRun {
  taskRunId: string;
  attempt: number;
  fence: number;
  executionId: string;
  taskId: string;
  pool: string;
  timeoutMs: number;
}

export function taskRunFromLabels(labels: Record<string, string> | undefined): LabelledTaskRun | null {
  const taskRunId = labels?.[DOCKER_LABELS.taskRun];
  const attempt = Number(labels?.[DOCKER_LABELS.attempt]);
  const fence = Number(labels?.[DOCKER_LABELS.fence]);
  if (!taskRunId || !Number.isInteger(attempt) || attempt < 1 || !Number.isInteger(fence)) return null;
  return {
    taskRunId,
    attempt,
    fence,
    executionId: labels?.[DOCKER_LABELS.execution] ?? '',
    taskId: labels?.[DOCKER_LABELS.task] ?? '',
    pool: labels?.[DOCKER_LABELS.pool] ?? 'default',
    timeoutMs: Number(labels?.[DOCKER_LABELS.timeoutMs]) || 1,
  };
}
