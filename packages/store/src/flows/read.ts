import type { Flow } from '@sluice/flows';
import { prismaOf, query, type Queryable, type Store } from '../handle';

export interface FlowRow {
  namespace: string;
  flowId: string;
  source: string;
  definition: unknown;
  schedule: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export async function getFlow(store: Store, namespace: string, flowId: string): Promise<FlowRow | null> {
  const row = await prismaOf(store).flow.findUnique({ where: { namespace_flowId: { namespace, flowId } } });
  return row ? { ...row, definition: row.definition as unknown } : null;
}

/** The flows of a namespace, by id. */
export async function listFlows(
  store: Store,
  namespace: string,
): Promise<Array<{ flowId: string; schedule: string | null; updatedAt: Date }>> {
  const rows = await prismaOf(store).flow.findMany({ where: { namespace }, orderBy: { flowId: 'asc' } });
  return rows.map((r) => ({ flowId: r.flowId, schedule: r.schedule, updatedAt: r.updatedAt }));
}

/** What an execution pins of its flow: the source and the validated definition (also inside a transaction). */
export async function getFlowForExecution(
  db: Queryable,
  namespace: string,
  flowId: string,
): Promise<{ source: string; definition: Flow } | null> {
  const r = await query<{ source: string; definition: Flow }>(
    db,
    'SELECT source, definition FROM flows WHERE namespace = $1 AND flow_id = $2',
    [namespace, flowId],
  );
  return r.rows[0] ?? null;
}
