import { randomBytes } from 'node:crypto';
import {
  CoreV1Api,
  KubeConfig,
  type V1ContainerStatus,
  type V1Pod,
  type V1PodStatus,
} from '@kubernetes/client-node';
import type { ClaimedTaskRun } from '@sluice/protocol';
import {
  claimedRun,
  createReadyNamespace,
  eventually,
  InMemoryExecutorProtocol,
  recordingLogger,
} from '@sluice/testing';
import { KubeClient, KubernetesExecutor, type ExecutorContext, type KubernetesExecutorOptions } from '../src';

/**
 * The real API server of the tests (`eval "$(bash scripts/kube-apiserver.sh)"` exports
 * KUBECONFIG). There is no kubelet: a test plays it by writing pod status.
 */
export const kubeAvailable = Boolean(process.env.KUBECONFIG);

/** `describe`, or a skip that says why when no API server is configured. */
export function describeKube(name: string, body: () => void): void {
  if (kubeAvailable) {
    describe(name, body);
    return;
  }
  describe(name, () => {
    it.skip(`needs a Kubernetes API server: eval "$(bash scripts/kube-apiserver.sh)" exports KUBECONFIG`, () => {});
  });
}

export interface KubeNamespace {
  name: string;
  core: CoreV1Api;
  client: KubeClient;
  delete(): Promise<void>;
}

/** A fresh namespace for one test file, ready once its `default` service account exists (pods need it). */
export async function createNamespace(prefix: string): Promise<KubeNamespace> {
  const config = new KubeConfig();
  config.loadFromDefault();
  const core = config.makeApiClient(CoreV1Api);
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await createReadyNamespace(core, name);
  return {
    name,
    core,
    client: new KubeClient(config, name),
    delete: async () => {
      await core.deleteNamespace({ name }).catch(() => undefined);
    },
  };
}

/** The pod the Job controller created for a Job. */
export function podOf(ns: KubeNamespace, job: string): Promise<V1Pod> {
  return eventually(
    `a pod of Job ${job}`,
    async () => (await ns.client.jobPods(job))[0] ?? null,
    30_000,
    100,
  );
}

/** Plays the kubelet: replaces the pod's status through the status subresource. */
export async function writePodStatus(ns: KubeNamespace, pod: V1Pod, status: V1PodStatus): Promise<void> {
  const name = pod.metadata?.name ?? '';
  const current = await ns.core.readNamespacedPod({ name, namespace: ns.name });
  await ns.core.replaceNamespacedPodStatus({
    name,
    namespace: ns.name,
    body: { ...current, status: { ...current.status, ...status } },
  });
}

/** A container status as a kubelet writes it. */
export function containerStatus(
  name: string,
  image: string,
  state: V1ContainerStatus['state'],
): V1ContainerStatus {
  return { name, image, imageID: '', ready: false, restartCount: 0, state };
}

/** An executor context on the in-memory protocol (it accepts any task run), logging into memory. */
export function kubeContext(runnerApiUrl = 'http://sluice:8081'): ExecutorContext {
  return {
    protocol: new InMemoryExecutorProtocol({ unknownTaskRuns: 'accept' }),
    runnerApiUrl,
    log: recordingLogger(),
  };
}

/** A claimed kubernetes task run with a fresh ID `<prefix><12 hex digits>`, in busybox unless told otherwise. */
export function kubeTaskRun(
  prefix: string,
  executor: Partial<ClaimedTaskRun['executor']> = {},
  overrides: Partial<ClaimedTaskRun> = {},
): ClaimedTaskRun {
  return claimedRun({
    taskRunId: `${prefix}${randomBytes(6).toString('hex')}`,
    ...overrides,
    executor: { type: 'kubernetes', pool: 'default', image: 'busybox:1.36', ...executor },
  });
}

/** The Job is gone (deleted, foreground: after its pods). */
export async function jobDeleted(ns: KubeNamespace, name: string): Promise<void> {
  await eventually('the Job deleted', async () => (await ns.client.readJob(name)) === null, 30_000, 100);
}

export const TEST_RUNNER_IMAGE = 'sluice-test/runner:1';

/** One test file's namespace and owner ID, and the executors its tests start. */
export interface KubeSuite {
  /** Set in beforeAll. */
  readonly ns: KubeNamespace;
  readonly ownerId: string;
  /** An executor of the owner in the namespace (poll 100 ms, heartbeat 200 ms unless told), shut down after the test. */
  executor(options?: Partial<KubernetesExecutorOptions>): KubernetesExecutor;
}

/**
 * Call inside the file's describe, before its own hooks: creates the namespace
 * (`<prefix>-<hex>`) before the tests and deletes it after them, and shuts the
 * test's executors down before the file's own afterEach runs.
 */
export function kubeSuite(prefix: string): KubeSuite {
  let ns: KubeNamespace | undefined;
  const executors: KubernetesExecutor[] = [];
  const ownerId = `k8s-${randomBytes(3).toString('hex')}`;
  beforeAll(async () => {
    ns = await createNamespace(prefix);
  }, 60_000);
  afterAll(async () => ns?.delete());
  afterEach(async () => {
    await Promise.all(executors.splice(0).map((e) => e.shutdown()));
  });
  const suite: KubeSuite = {
    get ns() {
      if (!ns) throw new Error(`the namespace of ${prefix} is not created yet`);
      return ns;
    },
    ownerId,
    executor(options = {}) {
      const executor = new KubernetesExecutor({
        client: suite.ns.client,
        ownerId,
        runnerImage: TEST_RUNNER_IMAGE,
        pollIntervalMs: 100,
        heartbeatIntervalMs: 200,
        ...options,
      });
      executors.push(executor);
      return executor;
    },
  };
  return suite;
}
