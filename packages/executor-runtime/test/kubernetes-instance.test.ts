import { randomBytes } from 'node:crypto';
import { BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parseEnv } from '@sluice/config';
import type {
  ClaimRequest,
  ClaimedTaskRun,
  ExecutorProtocol,
  InstanceRegistration,
  MarkStartedRequest,
} from '@sluice/protocol';
import { buildInstance, type BuiltInstance } from '../src/build-instance';

/**
 * A k8s-executor's instance against the real API server (`eval "$(bash scripts/kube-apiserver.sh)"`):
 * the kubernetes executor is built from K8S_EXECUTOR_*, registers under its owner ID, claims
 * kubernetes task runs and creates their Jobs.
 */

const kube = process.env.KUBECONFIG;
const describeKube = kube ? describe : describe.skip;
if (!kube) {
  describe('kubernetes instance', () => {
    it.skip('needs a Kubernetes API server: eval "$(bash scripts/kube-apiserver.sh)" exports KUBECONFIG', () => {});
  });
}

const silent = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
};

function protocolHanding(run: ClaimedTaskRun) {
  const registrations: InstanceRegistration[] = [];
  const claims: ClaimRequest[] = [];
  const started: MarkStartedRequest[] = [];
  let handed = false;
  const protocol: ExecutorProtocol = {
    register: async (r) => void registrations.push(r),
    claim: async (r) => {
      claims.push(r);
      if (handed || !r.executorTypes.includes('kubernetes')) return [];
      handed = true;
      return [run];
    },
    markStarted: async (r) => void started.push(r),
    heartbeat: async () => ({ cancel: false }),
    reportLogs: async () => undefined,
    complete: async () => ({ applied: true, state: 'FAILED' }),
    isStillRunning: async () => false,
    cancelRequested: async () => [],
    startSubflow: async () => ({ executionId: 'none' }),
    waitForWork: (ms) => new Promise((resolve) => setTimeout(() => resolve(false), Math.min(ms, 50))),
  };
  return { protocol, registrations, claims, started };
}

async function until<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describeKube('buildInstance with the kubernetes executor', () => {
  const namespace = `sluice-inst-${randomBytes(3).toString('hex')}`;
  let core: CoreV1Api;
  let batch: BatchV1Api;
  const built: BuiltInstance[] = [];

  beforeAll(async () => {
    const config = new KubeConfig();
    config.loadFromDefault();
    core = config.makeApiClient(CoreV1Api);
    batch = config.makeApiClient(BatchV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  });
  afterEach(async () => {
    await Promise.all(built.splice(0).map((b) => b.stop()));
  });
  afterAll(async () => {
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  function k8sConfig(extra: Record<string, string> = {}) {
    return parseEnv('k8s-executor', {
      EXECUTOR_API_URL: 'http://127.0.0.1:9',
      EXECUTOR_API_TOKEN: 't',
      K8S_EXECUTOR_OWNER_ID_PREFIX: 'blue',
      HOSTNAME: 'sluice-k8s-executor-3',
      K8S_EXECUTOR_NAMESPACE: namespace,
      K8S_EXECUTOR_SERVER_ADDR: 'http://sluice-server:8081',
      K8S_EXECUTOR_JOB_WORKER_INTERVAL: '50ms',
      SLUICE_EXECUTORS: 'kubernetes',
      ...extra,
    });
  }

  it('registers under the owner ID, claims kubernetes task runs one per interval and runs each as a Job', async () => {
    const run: ClaimedTaskRun = {
      taskRunId: `tri${randomBytes(6).toString('hex')}`,
      executionId: 'ex-1',
      taskId: 'task',
      attempt: 1,
      fence: 1,
      executor: { type: 'kubernetes', pool: 'default', image: 'busybox:1.36' },
      timeoutMs: 60_000,
      task: {},
      runToken: 'a-run-token',
    };
    const { protocol, registrations, claims, started } = protocolHanding(run);
    const instance = await buildInstance('k8s-executor', k8sConfig(), {
      protocol,
      version: 'test',
      runnerCommand: ['true'],
      env: { KUBECONFIG: kube },
      log: silent,
      engineCheckIntervalMs: 100,
      relayQueuedWork: false,
    });
    built.push(instance);
    expect(instance.executorTypes).toEqual(['inline', 'kubernetes']);
    expect(instance.instanceId).toBe('blue-3');
    await instance.start();
    expect(registrations[0]).toMatchObject({ instanceId: 'blue-3', executors: ['inline', 'kubernetes'] });
    expect(instance.ready()).toEqual({ ok: true });
    const mark = await until('the Job reported as started', () => started[0]);
    expect(mark.externalRef).toMatch(/^sluice-tri/);
    const job = await batch.readNamespacedJob({ name: mark.externalRef ?? '', namespace });
    expect(job.metadata?.labels?.['sluice.io/owner']).toBe('blue-3');
    const env = job.spec?.template.spec?.containers[0]?.env ?? [];
    expect(env.find((e) => e.name === 'SLUICE_API_URL')?.value).toBe('http://sluice-server:8081');
    // K8S_EXECUTOR_DEFAULT_CPU / _MEMORY when neither the block nor PIPELINE_RUNTIME_* sets them.
    expect(job.spec?.template.spec?.containers[0]?.resources?.requests).toEqual(
      expect.objectContaining({ cpu: expect.any(String), memory: expect.any(String) }),
    );
    const kubernetesClaims = claims.filter((c) => c.executorTypes.includes('kubernetes'));
    expect(kubernetesClaims.every((c) => c.limit === 1)).toBe(true);
  }, 60_000);

  it('claims no kubernetes task runs and is not ready while the Job dry run fails (no such namespace)', async () => {
    const run = { taskRunId: 'never' } as ClaimedTaskRun;
    const { protocol, claims } = protocolHanding(run);
    const instance = await buildInstance(
      'k8s-executor',
      k8sConfig({ K8S_EXECUTOR_NAMESPACE: `${namespace}-missing` }),
      {
        protocol,
        version: 'test',
        runnerCommand: ['true'],
        env: { KUBECONFIG: kube },
        log: silent,
        engineCheckIntervalMs: 100,
        relayQueuedWork: false,
      },
    );
    built.push(instance);
    await instance.start();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(instance.ready().ok).toBe(false);
    expect(instance.ready().detail).toContain('Kubernetes API');
    expect(claims.some((c) => c.executorTypes.includes('kubernetes'))).toBe(false);
  }, 60_000);
});
