import { eventually } from './eventually';

/** The two calls of @kubernetes/client-node's CoreV1Api this needs (structurally: no dependency here). */
export interface NamespaceApi {
  createNamespace(request: { body: { metadata: { name: string } } }): Promise<unknown>;
  readNamespacedServiceAccount(request: { name: string; namespace: string }): Promise<unknown>;
}

/**
 * Creates namespace `name` and waits until its `default` service account
 * exists: on Kubernetes 1.20 no pod of a Job can be created before it.
 */
export async function createReadyNamespace(core: NamespaceApi, name: string): Promise<void> {
  await core.createNamespace({ body: { metadata: { name } } });
  await eventually(
    'the default service account',
    () => core.readNamespacedServiceAccount({ name: 'default', namespace: name }).catch(() => null),
    30_000,
    100,
  );
}
