import type { Flow } from '@sluice/flows';
import { prismaOf, query, type Queryable, type Store } from '../handle';
import type { NamespaceKey } from '../workspaces';

export interface FlowRow {
  workspace: string;
  namespace: string;
  flowId: string;
  source: string;
  definition: unknown;
  schedule: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export async function getFlow(store: Store, ns: NamespaceKey, flowId: string): Promise<FlowRow | null> {
  const row = await prismaOf(store).flow.findUnique({
    where: { workspace_namespace_flowId: { workspace: ns.workspace, namespace: ns.namespace, flowId } },
  });
  return row ? { ...row, definition: row.definition as unknown } : null;
}

/**
 * The flows of a namespace, by id: all of them, or one page of at most
 * `limit` after the id `after` (the primary key serves both).
 */
export async function listFlows(
  store: Store,
  ns: NamespaceKey,
  page: { limit?: number; after?: string } = {},
): Promise<Array<{ flowId: string; schedule: string | null; updatedAt: Date }>> {
  const rows = await prismaOf(store).flow.findMany({
    where: {
      workspace: ns.workspace,
      namespace: ns.namespace,
      ...(page.after !== undefined ? { flowId: { gt: page.after } } : {}),
    },
    orderBy: { flowId: 'asc' },
    ...(page.limit !== undefined ? { take: page.limit } : {}),
  });
  return rows.map((r) => ({ flowId: r.flowId, schedule: r.schedule, updatedAt: r.updatedAt }));
}

/** What an execution pins of its flow: the source and the validated definition (also inside a transaction). */
export async function getFlowForExecution(
  db: Queryable,
  ns: NamespaceKey,
  flowId: string,
): Promise<{ source: string; definition: Flow } | null> {
  const r = await query<{ source: string; definition: Flow }>(
    db,
    'SELECT source, definition FROM flows WHERE workspace = $1 AND namespace = $2 AND flow_id = $3',
    [ns.workspace, ns.namespace, flowId],
  );
  return r.rows[0] ?? null;
}
