import { query, type Queryable } from '../handle';
import { assertTaskRunId } from '../errors';
import { refuseWrite } from './fence';
import type { FencedRef } from './start';
import { isActiveByKey } from './state-conditions';

/**
 * Proves the holder is alive (the watchdog fails runs whose heartbeat_at is
 * too old) and answers whether a cancel was requested, so cancelling needs no
 * extra channel to the executor. One UPDATE: the fence and an active state are
 * its condition, so a zombie's heartbeat changes nothing and throws
 * StaleFenceError.
 */
export async function heartbeatTaskRun(db: Queryable, ref: FencedRef): Promise<{ cancel: boolean }> {
  assertTaskRunId(ref.taskRunId);
  const { rows } = await query<{ cancel_requested: boolean }>(
    db,
    `UPDATE task_runs SET heartbeat_at = now()
     WHERE id = $1 AND fence = $2 AND ${isActiveByKey()}
     RETURNING cancel_requested`,
    [ref.taskRunId, ref.fence],
  );
  if (!rows[0]) return refuseWrite(db, ref.taskRunId, ref.fence);
  return { cancel: rows[0].cancel_requested };
}
