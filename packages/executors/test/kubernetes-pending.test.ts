import { randomBytes } from 'node:crypto';
import { KubernetesExecutor, noPodEnd, type ExecutorContext } from '../src';
import {
  containerStatus,
  describeKube,
  jobDeleted,
  kubeContext,
  kubeSuite,
  kubeTaskRun,
  podOf,
  writePodStatus,
} from './kubernetes-fixtures';

/**
 * K8S_EXECUTOR_POD_PENDING_TIMEOUT: a pod the scheduler cannot place fails its task run with
 * the scheduler's reason instead of waiting forever; a placed pod that is still starting does
 * not. The test writes what the scheduler would: the PodScheduled condition, or a binding.
 */

const IMAGE = 'busybox:1.36';
const PENDING_TIMEOUT_MS = 3_000;
const UNSCHEDULABLE = '0/3 nodes are available: 3 Insufficient cpu.';
let ctx: ExecutorContext;
let executor: KubernetesExecutor;

describeKube('KubernetesExecutor: a pod that stays pending', () => {
  const suite = kubeSuite('sluice-pending');

  beforeEach(() => {
    ctx = kubeContext();
    executor = suite.executor({
      pollIntervalMs: 200,
      heartbeatIntervalMs: 500,
      podPendingTimeoutMs: PENDING_TIMEOUT_MS,
    });
  });

  const kubeRun = () => kubeTaskRun('trp', { image: IMAGE, inject_runner: false });

  it('fails an unschedulable pod past the timeout, naming the scheduler’s message and the variable, and deletes the Job', async () => {
    const handle = await executor.start(kubeRun(), ctx);
    const job = handle.externalRef ?? '';
    const pod = await podOf(suite.ns, job);
    const writtenAt = Date.now();
    await writePodStatus(suite.ns, pod, {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: UNSCHEDULABLE,
          lastTransitionTime: new Date(),
        },
      ],
    });
    const outcome = await executor.wait(handle);
    // The transition time has whole seconds: at most one early.
    expect(Date.now() - writtenAt).toBeGreaterThanOrEqual(PENDING_TIMEOUT_MS - 1_000);
    expect(outcome.reason).toBe('error');
    expect(outcome.error).toContain(`pod ${pod.metadata?.name} of Job ${job} was not scheduled within 3s`);
    expect(outcome.error).toContain('K8S_EXECUTOR_POD_PENDING_TIMEOUT');
    expect(outcome.error).toContain(`Unschedulable: ${UNSCHEDULABLE}`);
    await jobDeleted(suite.ns, job);
  }, 60_000);

  it('leaves a pod alone once it is bound to a node, however long it takes to start', async () => {
    const handle = await executor.start(kubeRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    const name = pod.metadata?.name ?? '';
    // The scheduler's two writes: the binding (spec.nodeName), then PodScheduled=True.
    await suite.ns.core.createNamespacedPodBinding({
      name,
      namespace: suite.ns.name,
      body: { metadata: { name }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-a' } },
    });
    await writePodStatus(suite.ns, pod, {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: new Date() }],
      containerStatuses: [containerStatus('task', IMAGE, { waiting: { reason: 'ContainerCreating' } })],
    });
    await new Promise((resolve) => setTimeout(resolve, PENDING_TIMEOUT_MS + 1_500));
    expect(await executor.status(handle)).toBe('running');
    await writePodStatus(suite.ns, pod, { phase: 'Succeeded' });
    expect(await executor.wait(handle)).toMatchObject({ exitCode: 0 });
  }, 60_000);

  it('fails a Job that created no pod past the timeout (the Job as the API server returns it)', async () => {
    const created = await suite.ns.client.createJob({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: `nopod-${randomBytes(3).toString('hex')}` },
      spec: {
        backoffLimit: 0,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'task', image: IMAGE }] } },
      },
    });
    const createdAt = new Date(created.metadata?.creationTimestamp ?? 0).getTime();
    expect(noPodEnd(created, createdAt + PENDING_TIMEOUT_MS - 1, PENDING_TIMEOUT_MS)).toBeNull();
    const end = noPodEnd(created, createdAt + PENDING_TIMEOUT_MS, PENDING_TIMEOUT_MS);
    expect(end).toMatchObject({ kind: 'failed', reason: 'error' });
    expect(end?.error).toContain(`Job ${created.metadata?.name} created no pod within 3s`);
    expect(end?.error).toContain('K8S_EXECUTOR_POD_PENDING_TIMEOUT');
    await suite.ns.client.deleteJob(created.metadata?.name ?? '');
  }, 60_000);
});
