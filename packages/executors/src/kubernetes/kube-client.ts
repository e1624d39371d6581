import type {
  BatchV1Api,
  CoreV1Api,
  CoreV1Event,
  KubeConfig,
  V1Job,
  V1Pod,
  V1Secret,
} from '@kubernetes/client-node';

/** One line of a pod watch: a pod, a bookmark (a pod with only its resourceVersion), or an ERROR Status. */
export type PodWatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: V1Pod }
  | { type: 'ERROR'; object: { code?: number; reason?: string; message?: string } };

type KubeModule = typeof import('@kubernetes/client-node');
let loaded: KubeModule | null = null;

/**
 * The client library, loaded on first use: it takes about a second to load, and most
 * processes that import this package (a server without the kubernetes executor) never need it.
 */
function kube(): KubeModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('@kubernetes/client-node') as KubeModule;
  return loaded;
}

/** The calls the kubernetes executor makes, in one namespace (the RBAC Role in docs/kubernetes-executor.md). */
export class KubeClient {
  readonly namespace: string;
  private readonly batch: BatchV1Api;
  private readonly core: CoreV1Api;
  private readonly config: KubeConfig;

  constructor(config: KubeConfig, namespace: string) {
    this.namespace = namespace;
    this.config = config;
    this.batch = config.makeApiClient(kube().BatchV1Api);
    this.core = config.makeApiClient(kube().CoreV1Api);
  }

  createSecret(body: V1Secret): Promise<V1Secret> {
    return this.core.createNamespacedSecret({ namespace: this.namespace, body });
  }

  /** Makes the Job the Secret's owner, so the garbage collector deletes the Secret with the Job. */
  ownSecretByJob(secret: string, job: V1Job): Promise<V1Secret> {
    const owner = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      name: job.metadata?.name ?? '',
      uid: job.metadata?.uid ?? '',
    };
    return this.core.patchNamespacedSecret({
      name: secret,
      namespace: this.namespace,
      body: [{ op: 'add', path: '/metadata/ownerReferences', value: [owner] }],
    });
  }

  async deleteSecret(name: string): Promise<void> {
    await ignoreNotFound(this.core.deleteNamespacedSecret({ name, namespace: this.namespace }));
  }

  readSecret(name: string): Promise<V1Secret> {
    return this.core.readNamespacedSecret({ name, namespace: this.namespace });
  }

  createJob(body: V1Job, dryRun = false): Promise<V1Job> {
    return this.batch.createNamespacedJob({
      namespace: this.namespace,
      body,
      ...(dryRun ? { dryRun: 'All' } : {}),
    });
  }

  /** The Job, or null when it no longer exists. */
  readJob(name: string): Promise<V1Job | null> {
    return ignoreNotFound(this.batch.readNamespacedJob({ name, namespace: this.namespace }));
  }

  /** Foreground: the Job goes once its pods are gone; the Secret follows by its owner reference. */
  async deleteJob(name: string): Promise<void> {
    await ignoreNotFound(
      this.batch.deleteNamespacedJob({ name, namespace: this.namespace, propagationPolicy: 'Foreground' }),
    );
  }

  /** Every Job matching `labelSelector`, page by page (the API calls grow with pages, not with Jobs). */
  async listJobs(labelSelector: string, pageSize = 200): Promise<V1Job[]> {
    const jobs: V1Job[] = [];
    let next: string | undefined;
    do {
      const page = await this.batch.listNamespacedJob({
        namespace: this.namespace,
        labelSelector,
        limit: pageSize,
        ...(next ? { _continue: next } : {}),
      });
      jobs.push(...page.items);
      next = page.metadata?._continue || undefined;
    } while (next);
    return jobs;
  }

  /** Every Secret matching `labelSelector`, page by page. */
  async listSecrets(labelSelector: string, pageSize = 200): Promise<V1Secret[]> {
    const secrets: V1Secret[] = [];
    let next: string | undefined;
    do {
      const page = await this.core.listNamespacedSecret({
        namespace: this.namespace,
        labelSelector,
        limit: pageSize,
        ...(next ? { _continue: next } : {}),
      });
      secrets.push(...page.items);
      next = page.metadata?._continue || undefined;
    } while (next);
    return secrets;
  }

  /** The pods the Job controller created for a Job (it labels them `job-name`). */
  async jobPods(job: string): Promise<V1Pod[]> {
    const list = await this.core.listNamespacedPod({
      namespace: this.namespace,
      labelSelector: `job-name=${job}`,
    });
    return list.items;
  }

  /**
   * The resourceVersion a pod watch starts from: one list of at most one pod (the version is the
   * whole list's, so the call costs the same however many pods match).
   */
  async podsVersion(labelSelector: string): Promise<string> {
    const list = await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector, limit: 1 });
    return list.metadata?.resourceVersion ?? '';
  }

  /**
   * Watches the namespace's pods matching `labelSelector` from `resourceVersion`. `onEvent` gets
   * every line (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR); `onDone` is called once, when the
   * connection ends for any reason (the server's timeout, a drop, an abort). Abort the returned
   * controller to stop.
   */
  watchPods(
    labelSelector: string,
    resourceVersion: string,
    timeoutSeconds: number,
    onEvent: (event: PodWatchEvent) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    return new (kube().Watch)(this.config).watch(
      `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/pods`,
      { labelSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
      (type: string, object: unknown) => onEvent({ type, object } as PodWatchEvent),
      onDone,
    );
  }

  /** Events about one object of a kind (`Job`, `Pod`). */
  async eventsOf(kind: string, name: string): Promise<CoreV1Event[]> {
    const list = await this.core.listNamespacedEvent({
      namespace: this.namespace,
      fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}`,
    });
    return list.items;
  }
}

/**
 * The kube client of `env`'s KUBECONFIG (its first file), else the pod's service account
 * (in-cluster, KUBERNETES_SERVICE_HOST), else the client's defaults (~/.kube/config).
 */
export function createKubeClient(namespace: string, env: NodeJS.ProcessEnv = process.env): KubeClient {
  const config = new (kube().KubeConfig)();
  const file = env.KUBECONFIG?.split(':')[0];
  if (file) config.loadFromFile(file);
  else if (env.KUBERNETES_SERVICE_HOST) config.loadFromCluster();
  else config.loadFromDefault();
  return new KubeClient(config, namespace);
}

/** An API answer with HTTP status `code` (the client's ApiException), duck-typed across realms. */
export function isKubeStatus(err: unknown, code: number): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === code;
}

/** The Status message of a refused call, else the error's own message. */
export function kubeErrorMessage(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'body' in err && typeof err.body === 'string') {
    try {
      const status = JSON.parse(err.body) as { message?: unknown };
      if (typeof status.message === 'string') return status.message;
    } catch {
      // not JSON: fall through
    }
  }
  return err instanceof Error || (typeof err === 'object' && err !== null && 'message' in err)
    ? String((err as { message: unknown }).message)
    : String(err);
}

async function ignoreNotFound<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (err) {
    if (isKubeStatus(err, 404)) return null;
    throw err;
  }
}

/**
 * The probe of detection and of the engine watch (docs/decisions.md §5): a Job create with
 * dryRun=All in the namespace, which checks the API server, the namespace and the Role at once
 * and creates nothing.
 */
export async function kubernetesDryRun(client: KubeClient): Promise<boolean> {
  await client.createJob(
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'sluice-dry-run' },
      spec: {
        backoffLimit: 0,
        template: {
          spec: { restartPolicy: 'Never', containers: [{ name: 'probe', image: 'sluice-dry-run' }] },
        },
      },
    },
    true,
  );
  return true;
}
