import { prismaOf, type Store } from '../handle';
import type { NamespaceKey } from '../workspaces';
import type { FlowRow } from './read';

export interface FlowWrite extends NamespaceKey {
  flowId: string;
  /** The YAML as the user sent it. */
  source: string;
  /** The validated flow (stored as JSON). */
  definition: object;
  schedule: string | null;
}

/** Creates or replaces a flow; updated_at moves to now (the scheduler owes due times after it). */
export async function upsertFlow(store: Store, flow: FlowWrite): Promise<FlowRow> {
  const { workspace, namespace, flowId } = flow;
  const data = {
    source: flow.source,
    definition: flow.definition,
    schedule: flow.schedule,
    updatedAt: new Date(),
  };
  const row = await prismaOf(store).flow.upsert({
    where: { workspace_namespace_flowId: { workspace, namespace, flowId } },
    create: { workspace, namespace, flowId, ...data },
    update: data,
  });
  return { ...row, definition: row.definition as unknown };
}

/** False when there was no such flow. */
export async function deleteFlow(store: Store, ns: NamespaceKey, flowId: string): Promise<boolean> {
  const r = await prismaOf(store).flow.deleteMany({
    where: { workspace: ns.workspace, namespace: ns.namespace, flowId },
  });
  return r.count > 0;
}
