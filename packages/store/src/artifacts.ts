import { query, type Queryable } from './handle';
import { assertTaskRunId, isUuid } from './errors';
import { toArtifactInfo, toArtifactRow, type ArtifactInfo, type ArtifactRow } from './rows';
import { FENCED_TASK_RUN_CTE, refuseWrite } from './task-runs/fence';
import type { FencedRef } from './task-runs/start';

/**
 * Stores (or replaces) one artifact file of a task run. Size limits are the
 * caller's (runner API) to check, with artifactsTotalSize, before the upload
 * is read into memory.
 */
export async function putArtifact(
  db: Queryable,
  req: FencedRef & { name: string; content: Buffer },
): Promise<ArtifactInfo> {
  assertTaskRunId(req.taskRunId);
  if (req.name.length === 0 || req.name.includes('\u0000')) {
    throw new Error(`putArtifact: name must be non-empty text without NUL, got ${JSON.stringify(req.name)}`);
  }
  const { rows } = await query(
    db,
    `WITH ${FENCED_TASK_RUN_CTE}
     INSERT INTO artifacts (task_run_id, name, size, content)
     SELECT fenced.id, $3, $4, $5 FROM fenced
     ON CONFLICT (task_run_id, name)
       DO UPDATE SET size = EXCLUDED.size, content = EXCLUDED.content, created_at = now()
     RETURNING name, size, created_at`,
    [req.taskRunId, req.fence, req.name, req.content.length, req.content],
  );
  if (!rows[0]) return refuseWrite(db, req.taskRunId, req.fence);
  return toArtifactInfo(rows[0]);
}

/** Names and sizes, without the content. */
export async function listArtifacts(db: Queryable, taskRunId: string): Promise<ArtifactInfo[]> {
  if (!isUuid(taskRunId)) return [];
  const { rows } = await query(
    db,
    'SELECT name, size, created_at FROM artifacts WHERE task_run_id = $1 ORDER BY name',
    [taskRunId],
  );
  return rows.map(toArtifactInfo);
}

export async function getArtifact(
  db: Queryable,
  taskRunId: string,
  name: string,
): Promise<ArtifactRow | null> {
  if (!isUuid(taskRunId)) return null;
  const { rows } = await query(db, 'SELECT * FROM artifacts WHERE task_run_id = $1 AND name = $2', [
    taskRunId,
    name,
  ]);
  return rows[0] ? toArtifactRow(rows[0]) : null;
}

/** Bytes already stored for a task run, for the per-run total limit. */
export async function artifactsTotalSize(db: Queryable, taskRunId: string): Promise<number> {
  if (!isUuid(taskRunId)) return 0;
  const { rows } = await query<{ total: string }>(
    db,
    'SELECT coalesce(sum(size), 0)::bigint AS total FROM artifacts WHERE task_run_id = $1',
    [taskRunId],
  );
  return Number(rows[0]?.total ?? 0);
}
