import { z } from 'zod';

/** Task run life cycle: QUEUED → STARTING → RUNNING → SUCCEEDED / FAILED / CANCELLED. */
export const TaskRunState = z.enum(['QUEUED', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED']);
export type TaskRunState = z.infer<typeof TaskRunState>;
export const ACTIVE_TASK_RUN_STATES = ['STARTING', 'RUNNING'] as const;
export const TERMINAL_TASK_RUN_STATES = ['SUCCEEDED', 'FAILED', 'CANCELLED'] as const;

export const ExecutionState = z.enum(['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED']);
export type ExecutionState = z.infer<typeof ExecutionState>;

/** Why a task run ended (or, for `no_instance_for_pool`, why it still waits). */
export const TaskRunReason = z.enum([
  'lost',
  'instance_shutdown',
  'timeout',
  'max_duration',
  'cancelled',
  'exit_code',
  'image_pull',
  'pod_crash',
  'no_instance_for_pool',
  'error',
  // The task cannot run as given (e.g. a snapshot the runner refuses): deterministic, so never retried.
  'invalid_task',
]);
export type TaskRunReason = z.infer<typeof TaskRunReason>;

export const ExecutorType = z.enum(['inline', 'process', 'docker', 'kubernetes']);
export type ExecutorType = z.infer<typeof ExecutorType>;
/** Executor types a flow may choose (inline is implied by the task type). */
export const SelectableExecutorType = z.enum(['process', 'docker', 'kubernetes']);
export type SelectableExecutorType = z.infer<typeof SelectableExecutorType>;

export function isTerminalTaskRunState(state: string): boolean {
  return (TERMINAL_TASK_RUN_STATES as readonly string[]).includes(state);
}
