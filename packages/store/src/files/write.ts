import { createHash } from 'node:crypto';
import { prismaOf, type Store } from '../handle';
import type { NamespaceKey } from '../workspaces';

/** Creates or replaces a namespace file; answers its sha256. */
export async function putNamespaceFile(
  store: Store,
  ns: NamespaceKey,
  path: string,
  content: Buffer,
): Promise<{ sha256: string }> {
  const sha256 = createHash('sha256').update(content).digest('hex');
  const data = { content: new Uint8Array(content), sha256, updatedAt: new Date() };
  await prismaOf(store).namespaceFile.upsert({
    where: { workspace_namespace_path: { workspace: ns.workspace, namespace: ns.namespace, path } },
    create: { workspace: ns.workspace, namespace: ns.namespace, path, ...data },
    update: data,
  });
  return { sha256 };
}

/** False when there was no such file. */
export async function deleteNamespaceFile(store: Store, ns: NamespaceKey, path: string): Promise<boolean> {
  const r = await prismaOf(store).namespaceFile.deleteMany({
    where: { workspace: ns.workspace, namespace: ns.namespace, path },
  });
  return r.count > 0;
}
