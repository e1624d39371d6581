import type { LogLine } from '@sluice/protocol';
import { query, type Queryable } from './handle';
import { assertTaskRunId, isUuid } from './errors';
import { toLogLineRow, type LogLineRow } from './rows';
import { FENCED_TASK_RUN_CTE, refuseWrite } from './task-runs/fence';
import type { FencedRef } from './task-runs/start';

// One statement per batch: the fence check, the insert of every line (as
// parallel arrays through unnest, not one INSERT per line) and the count.
// ON CONFLICT DO NOTHING on (task_run_id, seq): the runner resends a batch
// whose answer it lost, and the first copy of a line wins.
const APPEND_SQL = `
WITH ${FENCED_TASK_RUN_CTE},
ins AS (
  INSERT INTO task_run_logs (task_run_id, seq, stream, line, ts)
  SELECT fenced.id, l.seq, l.stream, l.line, l.ts
  FROM fenced, unnest($3::int[], $4::text[], $5::text[], $6::timestamptz[]) AS l(seq, stream, line, ts)
  ON CONFLICT (task_run_id, seq) DO NOTHING
  RETURNING 1
)
SELECT (SELECT count(*) FROM fenced)::int AS fenced, (SELECT count(*) FROM ins)::int AS inserted`;

/**
 * Stores a batch of log lines; returns how many were new. The fence must be
 * the current one, but the run may have ended: the last lines of a task are
 * often flushed just after its completion.
 */
export async function appendLogs(db: Queryable, batch: FencedRef & { lines: LogLine[] }): Promise<number> {
  assertTaskRunId(batch.taskRunId);
  const { lines } = batch;
  const { rows } = await query<{ fenced: number; inserted: number }>(db, APPEND_SQL, [
    batch.taskRunId,
    batch.fence,
    lines.map((l) => l.seq),
    lines.map((l) => l.stream),
    // PostgreSQL text cannot hold NUL; a task may well print one.
    lines.map((l) => l.line.replaceAll('\u0000', '\uFFFD')),
    lines.map((l) => l.ts),
  ]);
  const result = rows[0];
  if (!result || result.fenced === 0) return refuseWrite(db, batch.taskRunId, batch.fence);
  return result.inserted;
}

/** Lines in seq order after `afterSeq` (0 = from the start): the API pages and follows with it. */
export async function readLogs(
  db: Queryable,
  taskRunId: string,
  opts: { afterSeq?: number; limit?: number } = {},
): Promise<LogLineRow[]> {
  if (!isUuid(taskRunId)) return [];
  const { rows } = await query(
    db,
    `SELECT seq, stream, line, ts FROM task_run_logs
     WHERE task_run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    [taskRunId, opts.afterSeq ?? 0, opts.limit ?? 1000],
  );
  return rows.map(toLogLineRow);
}
