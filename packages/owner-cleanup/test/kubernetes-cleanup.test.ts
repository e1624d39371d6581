import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { KubeClient, KubernetesExecutor, type ExecutorContext, type TaskRunHandle } from '@sluice/executors';
import type { ClaimedTaskRun } from '@sluice/protocol';
import {
  InMemoryExecutorProtocol,
  claimedRun,
  createReadyNamespace,
  eventually,
  recordingLogger,
} from '@sluice/testing';
import { runKubernetesCleanup } from '../src';

/**
 * Job cleanup and adoption after an executor restart, against the real API server: Jobs of
 * this owner whose task run still runs are adopted and finish; those of ended and unknown task
 * runs go with their Secrets; another owner's Jobs are never touched.
 */

const kube = process.env.KUBECONFIG;
const OWNER = `own-${randomBytes(3).toString('hex')}`;
const OTHER = `other-${randomBytes(3).toString('hex')}`;

if (!kube) {
  describe('kubernetes cleanup', () => {
    it.skip('needs a Kubernetes API server: eval "$(bash scripts/kube-apiserver.sh)" exports KUBECONFIG', () => {});
  });
}

(kube ? describe : describe.skip)('runKubernetesCleanup', () => {
  const namespace = `sluice-clean-${randomBytes(3).toString('hex')}`;
  let core: CoreV1Api;
  let client: KubeClient;

  beforeAll(async () => {
    const config = new KubeConfig();
    config.loadFromDefault();
    core = config.makeApiClient(CoreV1Api);
    await createReadyNamespace(core, namespace);
    client = new KubeClient(config, namespace);
  }, 60_000);
  afterAll(async () => {
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  const executorOf = (ownerId: string) =>
    new KubernetesExecutor({
      client,
      ownerId,
      runnerImage: 'sluice-test/runner:1',
      pollIntervalMs: 100,
      heartbeatIntervalMs: 200,
    });
  const kubeRun = (tag: string): ClaimedTaskRun =>
    claimedRun({
      taskRunId: `${tag}${randomBytes(5).toString('hex')}`,
      fence: 3,
      executor: { type: 'kubernetes', pool: 'etl', image: 'busybox:1.36', inject_runner: false },
    });

  it('adopts running work, deletes ended and unknown work with its Secret, and leaves other owners alone', async () => {
    const protocol = new InMemoryExecutorProtocol({ unknownTaskRuns: 'accept' });
    const ctx: ExecutorContext = { protocol, runnerApiUrl: 'http://sluice:8081', log: recordingLogger() };
    const before = executorOf(OWNER);
    const running = kubeRun('run');
    const ended = kubeRun('end');
    const unknown = kubeRun('unk');
    const foreign = kubeRun('for');
    const jobs: Record<string, string> = {};
    for (const run of [running, ended, unknown])
      jobs[run.taskRunId] = (await before.start(run, ctx)).externalRef ?? '';
    const other = executorOf(OTHER);
    jobs[foreign.taskRunId] = (await other.start(foreign, ctx)).externalRef ?? '';
    // An orphan Secret: an executor that died between the Secret and the Job.
    await client.createSecret({
      metadata: {
        name: `orphan-${randomBytes(3).toString('hex')}`,
        labels: { 'sluice.io/owner': OWNER, 'sluice.io/task-run': 'gone-run' },
      },
      stringData: { 'run-token': 'x' },
    });
    // The executor restarts: its Jobs keep running.
    await before.shutdown();
    await other.shutdown();

    const after = executorOf(OWNER);
    const adopted: Array<{ run: ClaimedTaskRun; handle: TaskRunHandle }> = [];
    const answers: Record<string, boolean> = { [running.taskRunId]: true, [ended.taskRunId]: false };
    const result = await runKubernetesCleanup({
      client,
      executor: after,
      ownerId: OWNER,
      protocol: {
        isStillRunning: async (id) => {
          if (id === foreign.taskRunId) throw new Error('asked about another owner’s task run');
          return answers[id] ?? false;
        },
      },
      ctx,
      instance: { adopt: (run, handle) => (adopted.push({ run, handle }), true) },
      log: recordingLogger(),
    });
    expect(result.adopted).toEqual([jobs[running.taskRunId]]);
    expect(result.deletedJobs.sort()).toEqual([jobs[ended.taskRunId], jobs[unknown.taskRunId]].sort());
    expect(result.deletedSecrets).toHaveLength(1);
    expect(adopted[0]?.run).toMatchObject({
      taskRunId: running.taskRunId,
      attempt: 1,
      fence: 3,
      executor: { type: 'kubernetes', pool: 'etl' },
    });
    expect(after.tracked()).toEqual([running.taskRunId]);

    for (const id of [ended.taskRunId, unknown.taskRunId]) {
      await eventually(
        `Job of ${id} deleted`,
        async () => (await client.readJob(jobs[id] ?? '')) === null,
        30_000,
        100,
      );
    }
    await eventually(
      'the Secrets of deleted Jobs collected',
      async () => (await client.listSecrets(`sluice.io/owner=${OWNER}`)).length === 1,
      60_000,
      200,
    );
    expect(await client.readJob(jobs[foreign.taskRunId] ?? '')).not.toBeNull();
    expect(await client.listSecrets(`sluice.io/owner=${OTHER}`)).toHaveLength(1);

    // A second pass keeps what is watched now.
    const again = await runKubernetesCleanup({
      client,
      executor: after,
      ownerId: OWNER,
      protocol: { isStillRunning: async () => false },
      ctx,
      instance: { adopt: () => true },
      log: recordingLogger(),
    });
    expect(again.kept).toEqual([jobs[running.taskRunId]]);
    expect(again.deletedJobs).toEqual([]);

    // The adopted Job finishes under the new executor.
    const handle = adopted[0]?.handle;
    if (!handle) throw new Error('nothing adopted');
    const pod = await eventually(
      'the adopted pod',
      async () => (await client.jobPods(handle.externalRef ?? ''))[0],
      30_000,
      100,
    );
    const current = await core.readNamespacedPod({ name: pod.metadata?.name ?? '', namespace });
    await core.replaceNamespacedPodStatus({
      name: pod.metadata?.name ?? '',
      namespace,
      body: { ...current, status: { ...current.status, phase: 'Succeeded' } },
    });
    expect(await after.wait(handle)).toMatchObject({ exitCode: 0 });
    await after.shutdown();
  }, 120_000);
});
