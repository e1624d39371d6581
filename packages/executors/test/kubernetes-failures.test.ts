import type { ClaimedTaskRun } from '@sluice/protocol';
import { KubernetesExecutor, type ExecutorContext, type TaskRunHandle } from '../src';
import {
  containerStatus,
  describeKube,
  jobDeleted,
  kubeContext,
  kubeSuite,
  kubeTaskRun,
  podOf,
  TEST_RUNNER_IMAGE,
  writePodStatus,
} from './kubernetes-fixtures';

/**
 * Why a Job's work ended without a result, told from pod status the test writes as the kubelet
 * would, and from the Job controller's own events.
 */

const IMAGE = 'busybox:1.36';
let ctx: ExecutorContext;
let executor: KubernetesExecutor;

describeKube('KubernetesExecutor: work that ends without a result', () => {
  const suite = kubeSuite('sluice-fail');

  beforeEach(() => {
    ctx = kubeContext();
    executor = suite.executor({ imagePullGraceMs: 1_000 });
  });

  const kubeRun = (executorBlock: Partial<ClaimedTaskRun['executor']> = {}) =>
    kubeTaskRun('trf', { image: IMAGE, inject_runner: false, ...executorBlock });

  const jobGone = (handle: TaskRunHandle) => jobDeleted(suite.ns, handle.externalRef ?? '');

  it('fails image_pull after the grace when the pod cannot pull its image, and deletes the Job', async () => {
    const handle = await executor.start(kubeRun({ image: 'registry.invalid/nope:1' }), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    const startedAt = Date.now();
    await writePodStatus(suite.ns, pod, {
      phase: 'Pending',
      containerStatuses: [
        containerStatus('task', 'registry.invalid/nope:1', {
          waiting: {
            reason: 'ImagePullBackOff',
            message: 'Back-off pulling image "registry.invalid/nope:1"',
          },
        }),
      ],
    });
    const outcome = await executor.wait(handle);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(900);
    expect(outcome.reason).toBe('image_pull');
    expect(outcome.error).toContain('ImagePullBackOff');
    expect(outcome.error).toContain('registry.invalid/nope:1');
    await jobGone(handle);
  }, 60_000);

  it('waits out a pull error that clears within the grace', async () => {
    const handle = await executor.start(kubeRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await writePodStatus(suite.ns, pod, {
      phase: 'Pending',
      containerStatuses: [containerStatus('task', IMAGE, { waiting: { reason: 'ErrImagePull' } })],
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await writePodStatus(suite.ns, pod, {
      phase: 'Running',
      containerStatuses: [containerStatus('task', IMAGE, { running: { startedAt: new Date() } })],
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await executor.status(handle)).toBe('running');
    await writePodStatus(suite.ns, pod, { phase: 'Succeeded' });
    expect(await executor.wait(handle)).toMatchObject({ exitCode: 0 });
  }, 60_000);

  it('fails pod_crash with the termination message when the container exits 1', async () => {
    const handle = await executor.start(kubeRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await writePodStatus(suite.ns, pod, {
      phase: 'Failed',
      containerStatuses: [
        containerStatus('task', IMAGE, {
          terminated: { exitCode: 1, reason: 'Error', message: 'sluice: exec format error' },
        }),
      ],
    });
    const outcome = await executor.wait(handle);
    expect(outcome).toMatchObject({ reason: 'pod_crash', exitCode: 1 });
    expect(outcome.error).toContain('sluice: exec format error');
    expect(outcome.error).toContain('exit code 1');
    await jobGone(handle);
  }, 60_000);

  it('fails pod_crash naming OOMKilled', async () => {
    const handle = await executor.start(kubeRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await writePodStatus(suite.ns, pod, {
      phase: 'Failed',
      containerStatuses: [
        containerStatus('task', IMAGE, { terminated: { exitCode: 137, reason: 'OOMKilled' } }),
      ],
    });
    const outcome = await executor.wait(handle);
    expect(outcome.reason).toBe('pod_crash');
    expect(outcome.error).toContain('OOMKilled');
    await jobGone(handle);
  }, 60_000);

  it('fails pod_crash naming the init container when the runner install fails', async () => {
    const handle = await executor.start(kubeRun({ inject_runner: true }), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await writePodStatus(suite.ns, pod, {
      phase: 'Failed',
      initContainerStatuses: [
        containerStatus('sluice-runner-install', TEST_RUNNER_IMAGE, {
          terminated: { exitCode: 2, reason: 'Error', message: 'runner-install: no space left' },
        }),
      ],
    });
    const outcome = await executor.wait(handle);
    expect(outcome.reason).toBe('pod_crash');
    expect(outcome.error).toContain('init container sluice-runner-install');
    expect(outcome.error).toContain('no space left');
  }, 60_000);

  it('fails lost when the pod is evicted', async () => {
    const handle = await executor.start(kubeRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await writePodStatus(suite.ns, pod, {
      phase: 'Failed',
      reason: 'Evicted',
      message: 'The node was low on resource: memory.',
    });
    const outcome = await executor.wait(handle);
    expect(outcome.reason).toBe('lost');
    expect(outcome.error).toContain('evicted');
    expect(outcome.error).toContain('low on resource');
    await jobGone(handle);
  }, 60_000);

  it('fails lost when the pod is deleted from outside', async () => {
    const handle = await executor.start(kubeRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    // The executor must have seen the pod before it goes.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await suite.ns.core.deleteNamespacedPod({
      name: pod.metadata?.name ?? '',
      namespace: suite.ns.name,
      gracePeriodSeconds: 0,
    });
    const outcome = await executor.wait(handle);
    expect(outcome.reason).toBe('lost');
    expect(outcome.error).toContain('deleted');
    await jobGone(handle);
  }, 60_000);

  it('fails lost when the Job is deleted from outside', async () => {
    const handle = await executor.start(kubeRun(), ctx);
    await suite.ns.client.deleteJob(handle.externalRef ?? '');
    const outcome = await executor.wait(handle);
    expect(outcome.reason).toBe('lost');
    expect(outcome.cancelled).toBeUndefined();
    expect(outcome.error).toContain(`Job ${handle.externalRef}`);
  }, 60_000);

  it('fails with an error naming a missing service account instead of waiting for a pod', async () => {
    const handle = await executor.start(kubeRun({ service_account: 'no-such-account' }), ctx);
    const outcome = await executor.wait(handle);
    expect(outcome.reason).toBe('error');
    expect(outcome.error).toContain('cannot create its pod');
    expect(outcome.error).toContain('no-such-account');
    await jobGone(handle);
  }, 60_000);
});
