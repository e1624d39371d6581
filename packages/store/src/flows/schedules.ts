import { query, type Queryable } from '../handle';

export interface ScheduledFlow {
  workspace: string;
  namespace: string;
  flowId: string;
  schedule: string;
  /** max(latest scheduled_for, updated_at): due times strictly after this are owed. */
  after: Date;
}

/** Every flow with a schedule, and the database's clock (the one every replica shares). */
export async function listScheduledFlows(db: Queryable): Promise<{ flows: ScheduledFlow[]; dbNow: Date }> {
  // GREATEST ignores NULL: a flow that never ran is owed the due times since it was saved.
  // max(scheduled_for) per flow is an index lookup (executions_workspace_namespace_flow_id_scheduled_for_key).
  const r = await query<ScheduledFlow & { dbNow: Date }>(
    db,
    `SELECT f.workspace, f.namespace, f.flow_id AS "flowId", f.schedule, now() AS "dbNow",
            GREATEST(f.updated_at,
                     (SELECT max(e.scheduled_for) FROM executions e
                      WHERE e.workspace = f.workspace AND e.namespace = f.namespace AND e.flow_id = f.flow_id)) AS after
     FROM flows f
     WHERE f.schedule IS NOT NULL AND btrim(f.schedule) <> ''
     ORDER BY f.workspace, f.namespace, f.flow_id`,
  );
  const dbNow = r.rows[0]?.dbNow ?? new Date();
  return { flows: r.rows.map(({ dbNow: _ignored, ...flow }) => flow), dbNow };
}
