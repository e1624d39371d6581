import type { TaskRunReason } from '@sluice/protocol';

/**
 * A start that failed for a reason the user should see on the task run
 * (for example `image_pull`) rather than the generic `error`.
 */
export class TaskRunStartError extends Error {
  readonly reason: TaskRunReason;

  constructor(reason: TaskRunReason, message: string) {
    super(message);
    this.name = 'TaskRunStartError';
    this.reason = reason;
  }
}

/** The reason a thrown start error carries; duck-typed, so it survives a realm boundary. */
export function startFailureReason(err: unknown): TaskRunReason | undefined {
  if (typeof err !== 'object' || err === null || !('name' in err) || err.name !== 'TaskRunStartError') {
    return undefined;
  }
  return 'reason' in err ? (err.reason as TaskRunReason) : undefined;
}
