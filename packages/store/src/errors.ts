import { StaleFenceError } from '@sluice/protocol';

export { StaleFenceError };

/** A task run id that no row has (or that is not a UUID at all). */
export class TaskRunNotFoundError extends Error {
  readonly code = 'task_run_not_found';
  constructor(readonly taskRunId: string) {
    super(`task run ${taskRunId} does not exist`);
    this.name = 'TaskRunNotFoundError';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids arrive from the network; PostgreSQL would reject a malformed uuid with an error, we answer "unknown". */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/** Fenced writes name an existing task run; a malformed id is as unknown as a missing one. */
export function assertTaskRunId(taskRunId: string): void {
  if (!isUuid(taskRunId)) throw new TaskRunNotFoundError(taskRunId);
}
