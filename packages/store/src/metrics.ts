import type { Metric } from '@sluice/protocol';
import { query, type Queryable } from './handle';
import { assertTaskRunId, isUuid } from './errors';
import { FENCED_TASK_RUN_CTE, refuseWrite } from './task-runs/fence';
import type { FencedRef } from './task-runs/start';

/** Appends metric points of a task run; returns how many were stored. */
export async function addMetrics(db: Queryable, req: FencedRef & { metrics: Metric[] }): Promise<number> {
  assertTaskRunId(req.taskRunId);
  const { rows } = await query<{ fenced: number; inserted: number }>(
    db,
    `WITH ${FENCED_TASK_RUN_CTE},
     ins AS (
       INSERT INTO task_run_metrics (task_run_id, name, value, tags)
       SELECT fenced.id, m.name, m.value, m.tags::jsonb
       FROM fenced, unnest($3::text[], $4::float8[], $5::text[]) AS m(name, value, tags)
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM fenced)::int AS fenced, (SELECT count(*) FROM ins)::int AS inserted`,
    [
      req.taskRunId,
      req.fence,
      req.metrics.map((m) => m.name),
      req.metrics.map((m) => m.value),
      req.metrics.map((m) => JSON.stringify(m.tags ?? {})),
    ],
  );
  if (!rows[0]?.fenced) return refuseWrite(db, req.taskRunId, req.fence);
  return rows[0].inserted;
}

export interface MetricRow {
  name: string;
  value: number;
  tags: Record<string, string>;
  ts: Date;
}

export async function listMetrics(db: Queryable, taskRunId: string): Promise<MetricRow[]> {
  if (!isUuid(taskRunId)) return [];
  const { rows } = await query<MetricRow>(
    db,
    'SELECT name, value, tags, ts FROM task_run_metrics WHERE task_run_id = $1 ORDER BY id',
    [taskRunId],
  );
  return rows;
}
