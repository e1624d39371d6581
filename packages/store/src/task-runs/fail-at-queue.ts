import { query, type TransactionScope } from '../handle';

/**
 * Ends a just-queued task run FAILED (`error`) before anyone could claim it:
 * its templates did not render. Like every end by someone other than the
 * holder, it bumps the fence.
 */
export async function failQueuedTaskRun(
  tx: TransactionScope,
  taskRunId: string,
  error: string,
): Promise<void> {
  await query(
    tx,
    `UPDATE task_runs SET state = 'FAILED', reason = 'error', error = $2, fence = fence + 1, ended_at = now()
     WHERE id = $1`,
    [taskRunId, error],
  );
}
