import { query, type Queryable } from './handle';
import { assertTaskRunId, isUuid } from './errors';
import { FENCED_TASK_RUN_CTE, refuseWrite } from './task-runs/fence';
import type { FencedRef } from './task-runs/start';

/**
 * Sets output values of a task run (a key written again takes the new value).
 * Fenced like logs: the current fence, ended or not, since outputs are sent
 * with or just before the completion.
 */
export async function setOutputs(
  db: Queryable,
  req: FencedRef & { outputs: Record<string, string> },
): Promise<void> {
  assertTaskRunId(req.taskRunId);
  const entries = Object.entries(req.outputs);
  const { rows } = await query<{ fenced: number }>(
    db,
    `WITH ${FENCED_TASK_RUN_CTE},
     ins AS (
       INSERT INTO task_run_outputs (task_run_id, key, value)
       SELECT fenced.id, o.key, o.value FROM fenced, unnest($3::text[], $4::text[]) AS o(key, value)
       ON CONFLICT (task_run_id, key) DO UPDATE SET value = EXCLUDED.value
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM fenced)::int AS fenced, (SELECT count(*) FROM ins)::int AS written`,
    [
      req.taskRunId,
      req.fence,
      entries.map(([k]) => k),
      entries.map(([, v]) => v.replaceAll('\u0000', '\uFFFD')),
    ],
  );
  if (!rows[0]?.fenced) await refuseWrite(db, req.taskRunId, req.fence);
}

/**
 * Outputs other tasks of the execution may read (`{{ outputs.<task>.<key> }}`):
 * per task, those of its latest SUCCEEDED attempt. A succeeded task without
 * outputs maps to {}; a task that never succeeded is absent.
 */
export async function getOutputsOfExecution(
  db: Queryable,
  executionId: string,
): Promise<Record<string, Record<string, string>>> {
  if (!isUuid(executionId)) return {};
  const { rows } = await query<{ task_id: string; key: string | null; value: string | null }>(
    db,
    `WITH latest AS (
       SELECT DISTINCT ON (task_id) id, task_id FROM task_runs
       WHERE execution_id = $1 AND state = 'SUCCEEDED'
       ORDER BY task_id, attempt DESC
     )
     SELECT l.task_id, o.key, o.value FROM latest l LEFT JOIN task_run_outputs o ON o.task_run_id = l.id`,
    [executionId],
  );
  const out: Record<string, Record<string, string>> = {};
  for (const r of rows) {
    const task = (out[r.task_id] ??= {});
    if (r.key !== null && r.value !== null) task[r.key] = r.value;
  }
  return out;
}
