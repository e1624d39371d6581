import { randomBytes } from 'node:crypto';
import type { ClaimedTaskRun } from '@sluice/protocol';
import { InMemoryExecutorProtocol, eventually } from '@sluice/testing';
import { RUN_TOKEN_KEY, type ExecutorContext } from '../src';
import {
  describeKube,
  jobDeleted,
  kubeContext,
  kubeSuite,
  kubeTaskRun,
  podOf,
  TEST_RUNNER_IMAGE,
  writePodStatus,
} from './kubernetes-fixtures';

/** What a kubernetes task run creates, how a cancel removes it, and a pod that succeeds. */

let ctx: ExecutorContext;

describeKube('KubernetesExecutor: the Job of an attempt', () => {
  const suite = kubeSuite('sluice-job');

  beforeEach(() => {
    ctx = kubeContext('http://sluice-server.sluice:8081');
  });

  const kubeRun = (executor: Partial<ClaimedTaskRun['executor']> = {}) =>
    kubeTaskRun('trk', executor, {
      attempt: 2,
      timeoutMs: 90_000,
      runToken: `tok-${randomBytes(16).toString('hex')}`,
    });

  it('creates a labelled Job with backoffLimit 0, a deadline, the injected runner and the token only by secretKeyRef', async () => {
    const executor = suite.executor({ defaultResources: { cpu: '250m', memory: '128Mi' } });
    const run = kubeRun({
      resources: { memory: '256Mi' },
      node_selector: { disktype: 'ssd' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'sluice', effect: 'NoSchedule' }],
    });
    const handle = await executor.start(run, ctx);
    const name = handle.externalRef ?? '';
    expect(name).toMatch(/^sluice-trk[0-9a-f]{5}-2-[0-9a-f]{10}$/);
    expect(name.length).toBeLessThanOrEqual(63);

    const job = await suite.ns.client.readJob(name);
    const labels = {
      'sluice.io/owner': suite.ownerId,
      'sluice.io/task-run': run.taskRunId,
      'sluice.io/attempt': '2',
    };
    expect(job?.metadata?.labels).toMatchObject(labels);
    expect(job?.spec?.backoffLimit).toBe(0);
    expect(job?.spec?.activeDeadlineSeconds).toBe(90 + 60);
    const pod = job?.spec?.template.spec;
    expect(job?.spec?.template.metadata?.labels).toMatchObject(labels);
    expect(pod?.restartPolicy).toBe('Never');
    expect(pod?.nodeSelector).toEqual({ disktype: 'ssd' });
    expect(pod?.tolerations).toEqual([
      { key: 'dedicated', operator: 'Equal', value: 'sluice', effect: 'NoSchedule' },
    ]);
    expect(pod?.volumes).toEqual([{ name: 'sluice-bin', emptyDir: {} }]);
    expect(pod?.initContainers).toHaveLength(1);
    const init = pod?.initContainers?.[0];
    expect(init?.image).toBe(TEST_RUNNER_IMAGE);
    expect(init?.command).toEqual(['/usr/local/bin/sluice', 'runner-install', '/sluice-bin']);
    expect(init?.volumeMounts).toEqual([{ name: 'sluice-bin', mountPath: '/sluice-bin' }]);
    const task = pod?.containers[0];
    expect(task?.image).toBe('busybox:1.36');
    expect(task?.command).toEqual([
      '/sluice-bin/lib/ld-linux-x86-64.so.2',
      '--library-path',
      '/sluice-bin/lib',
      '/sluice-bin/sluice',
      'exec',
    ]);
    expect(task?.volumeMounts).toEqual([{ name: 'sluice-bin', mountPath: '/sluice-bin' }]);
    expect(task?.resources).toEqual({
      requests: { cpu: '250m', memory: '256Mi' },
      limits: { cpu: '250m', memory: '256Mi' },
    });
    const env = Object.fromEntries((task?.env ?? []).map((e) => [e.name, e]));
    expect(env.SLUICE_API_URL?.value).toBe('http://sluice-server.sluice:8081');
    expect(env.SLUICE_TASK_RUN_ID?.value).toBe(run.taskRunId);
    expect(env.SLUICE_RUN_TOKEN?.value).toBeUndefined();
    const secretName = env.SLUICE_RUN_TOKEN?.valueFrom?.secretKeyRef?.name ?? '';
    expect(env.SLUICE_RUN_TOKEN?.valueFrom?.secretKeyRef?.key).toBe(RUN_TOKEN_KEY);

    // No token in the Job, nor in the pod the Job controller made of it.
    const podObject = await podOf(suite.ns, name);
    for (const manifest of [job, podObject]) {
      const text = JSON.stringify(manifest);
      expect(text).not.toContain(run.runToken);
      expect(text).not.toContain(Buffer.from(run.runToken).toString('base64'));
    }

    const secret = await suite.ns.client.readSecret(secretName);
    expect(secret.metadata?.labels).toMatchObject(labels);
    expect(Object.keys(secret.data ?? {})).toEqual([RUN_TOKEN_KEY]);
    expect(Buffer.from(secret.data?.[RUN_TOKEN_KEY] ?? '', 'base64').toString()).toBe(run.runToken);
    expect(secret.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ apiVersion: 'batch/v1', kind: 'Job', name, uid: job?.metadata?.uid }),
    ]);
    expect(await executor.status(handle)).toBe('running');

    // Cancel: the Job goes (foreground), the garbage collector takes the Secret with it.
    await executor.cancel(handle);
    const outcome = await executor.wait(handle);
    expect(outcome.cancelled).toBe(true);
    await jobDeleted(suite.ns, name);
    await eventually(
      'the Secret removed by the garbage collector',
      () =>
        suite.ns.client.readSecret(secretName).then(
          () => false,
          (err: { code?: number }) => err.code === 404,
        ),
      60_000,
      200,
    );
    expect(await executor.status(handle)).toBe('exited');
  }, 120_000);

  it('runs the image’s own sluice exec without an init container when inject_runner is false', async () => {
    const executor = suite.executor({ defaultResources: { cpu: '1', memory: '1Gi' } });
    const run = kubeRun({ inject_runner: false, service_account: 'default' });
    const handle = await executor.start(run, ctx);
    const job = await suite.ns.client.readJob(handle.externalRef ?? '');
    const pod = job?.spec?.template.spec;
    expect(pod?.initContainers ?? []).toEqual([]);
    expect(pod?.volumes ?? []).toEqual([]);
    expect(pod?.serviceAccountName).toBe('default');
    expect(pod?.containers[0]?.command).toEqual(['sluice', 'exec']);
    expect(pod?.containers[0]?.resources).toEqual({
      requests: { cpu: '1', memory: '1Gi' },
      limits: { cpu: '1', memory: '1Gi' },
    });
    await executor.cancel(handle);
    await executor.wait(handle);
  }, 60_000);

  it('ends with exit code 0 when the pod succeeds (the runner reported the result) and deletes the Job', async () => {
    const executor = suite.executor();
    const handle = await executor.start(kubeRun(), ctx);
    const name = handle.externalRef ?? '';
    const pod = await podOf(suite.ns, name);
    await writePodStatus(suite.ns, pod, { phase: 'Succeeded' });
    const outcome = await executor.wait(handle);
    expect(outcome).toMatchObject({ exitCode: 0 });
    expect(outcome.reason).toBeUndefined();
    expect(outcome.cancelled).toBeUndefined();
    await jobDeleted(suite.ns, name);
  }, 60_000);

  it('deletes the Job when the server answers a heartbeat with cancel', async () => {
    const protocol = new InMemoryExecutorProtocol({ unknownTaskRuns: 'accept' });
    const executor = suite.executor();
    const run = kubeRun();
    const handle = await executor.start(run, { ...ctx, protocol });
    protocol.cancels.add(run.taskRunId);
    const outcome = await executor.wait(handle);
    expect(outcome.cancelled).toBe(true);
    await eventually(
      'the Job deleted',
      async () => (await suite.ns.client.readJob(handle.externalRef ?? '')) === null,
      30_000,
      100,
    );
  }, 60_000);
});
