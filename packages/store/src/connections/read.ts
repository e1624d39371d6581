import { query, type Queryable } from '../handle';
import type { NamespaceKey } from '../workspaces';

/*
 * Reads of the connections API (docs/api.md#connections). A connection is a
 * flow marked `connection: true` (its validated definition carries the
 * marker); its state and ledger are the sync tables' (src/sync/).
 */

const IS_CONNECTION = `(definition ->> 'connection') = 'true'`;

export interface ConnectionFlowRow {
  flowId: string;
  source: string;
  definition: unknown;
  schedule: string | null;
  updatedAt: Date;
}

/**
 * The connections of a namespace, by name (= flow id): one page of at most
 * `limit` after the name `after`. The flows' primary key gives the order; the
 * marker is checked on the rows it reads.
 */
export async function listConnectionFlows(
  db: Queryable,
  ns: NamespaceKey,
  page: { limit: number; after?: string },
): Promise<ConnectionFlowRow[]> {
  const after = page.after !== undefined ? ' AND flow_id > $4' : '';
  const values: unknown[] = [ns.workspace, ns.namespace, page.limit];
  if (page.after !== undefined) values.push(page.after);
  const { rows } = await query<ConnectionFlowRow>(
    db,
    `SELECT flow_id AS "flowId", source, definition, schedule, updated_at AS "updatedAt"
     FROM flows WHERE workspace = $1 AND namespace = $2 AND ${IS_CONNECTION}${after}
     ORDER BY flow_id LIMIT $3`,
    values,
  );
  return rows;
}

/** Which of these flows of the namespace are connections. */
export async function connectionFlowIds(
  db: Queryable,
  ns: NamespaceKey,
  flowIds: readonly string[],
): Promise<Set<string>> {
  if (flowIds.length === 0) return new Set();
  const { rows } = await query<{ flowId: string }>(
    db,
    `SELECT flow_id AS "flowId" FROM flows
     WHERE workspace = $1 AND namespace = $2 AND flow_id = ANY($3::text[]) AND ${IS_CONNECTION}`,
    [ns.workspace, ns.namespace, [...flowIds]],
  );
  return new Set(rows.map((r) => r.flowId));
}

/** Whether an execution of the flow is QUEUED or RUNNING (a sync that may still commit state). */
export async function hasActiveExecution(db: Queryable, ns: NamespaceKey, flowId: string): Promise<boolean> {
  const { rows } = await query<{ active: boolean }>(
    db,
    `SELECT EXISTS (SELECT 1 FROM executions
                    WHERE workspace = $1 AND namespace = $2 AND flow_id = $3
                      AND state IN ('QUEUED', 'RUNNING')) AS active`,
    [ns.workspace, ns.namespace, flowId],
  );
  return rows[0]?.active ?? false;
}

export interface CommittedTotals {
  /** Ledger rows (committed states) of the task run. */
  commits: number;
  records: number;
  bytes: number;
}

/** Records and bytes the commit ledger holds per task run (what each attempt made durable). */
export async function committedTotalsOfTaskRuns(
  db: Queryable,
  taskRunIds: readonly string[],
): Promise<Map<string, CommittedTotals>> {
  if (taskRunIds.length === 0) return new Map();
  const { rows } = await query<{ taskRunId: string; commits: number; records: string; bytes: string }>(
    db,
    `SELECT task_run_id AS "taskRunId", count(*)::int AS commits,
            sum(records)::text AS records, sum(bytes)::text AS bytes
     FROM sync_commits WHERE task_run_id = ANY($1::uuid[]) GROUP BY task_run_id`,
    [[...taskRunIds]],
  );
  return new Map(
    rows.map((r) => [
      r.taskRunId,
      { commits: r.commits, records: Number(r.records), bytes: Number(r.bytes) },
    ]),
  );
}
