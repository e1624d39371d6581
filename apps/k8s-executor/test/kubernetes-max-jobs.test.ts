import { randomBytes } from 'node:crypto';
import {
  createReadyNamespace,
  ended,
  eventually,
  explained,
  sleep,
  userApi,
  useTopology,
  type AppProcess,
  type ServerProcess,
} from '@sluice/testing';
import { describeKube, kube, kubeApis, startK8sExecutor } from './kube-flow-fixtures';

/**
 * SLUICE_K8S_MAX_JOBS bounds the active Jobs of a pool over all instances (the claim enforces
 * it): two k8s-executors on one pool never have more than two Jobs at once.
 */

const NAMESPACE = `sluice-max-${randomBytes(3).toString('hex')}`;
const OWNERS = [`max-a-${randomBytes(2).toString('hex')}`, `max-b-${randomBytes(2).toString('hex')}`];

const { core, batch } = kubeApis(NAMESPACE);
let second: AppProcess | null = null;

const k8sExecutor = (server: Pick<ServerProcess, 'internalUrl'>, owner: string) =>
  startK8sExecutor(server, owner, NAMESPACE, { K8S_EXECUTOR_JOB_WORKER_INTERVAL: '100ms' });

const topology = kube
  ? useTopology({
      serverEnv: { SLUICE_K8S_MAX_JOBS: '2' },
      jobsEnv: { PIPELINE_JOB_SCHEDULER_INTERVAL: '200ms' },
      startExecutor: async (server) => {
        await createReadyNamespace(core, NAMESPACE);
        second = await k8sExecutor(server, OWNERS[1] ?? '');
        return k8sExecutor(server, OWNERS[0] ?? '');
      },
      cleanup: async () => {
        await second?.stop();
        await core.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
      },
    })
  : null;

const activeJobs = async () =>
  (await batch.listNamespacedJob({ namespace: NAMESPACE })).items.filter(
    (j) => !j.metadata?.deletionTimestamp,
  );

describeKube('SLUICE_K8S_MAX_JOBS over two k8s-executors', () => {
  it('never has more than two active Jobs in the pool, and the rest run as Jobs end', async () => {
    if (!topology) return;
    const { server, everything } = topology;
    const api = await userApi(server, 'admin');
    const flow = [
      'retry: { max_attempts: 1 }',
      'tasks:',
      '  - id: main',
      '    type: command',
      '    executor: { type: kubernetes, image: "busybox:1.36", inject_runner: false }',
      '    command: ["true"]',
      '',
    ].join('\n');
    expect((await api.putFlow('kube', 'many', flow)).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await api.run('kube', 'many'));

    // A Job counts while its pod has not ended: an ended attempt's Job is deleted only after its
    // end is recorded, and by then its place in the limit is free.
    const finished = new Set<string>();
    const owners = new Set<string>();
    const most = { count: 0 };
    const running = async () => {
      const jobs = (await activeJobs()).filter((j) => !finished.has(j.metadata?.name ?? ''));
      most.count = Math.max(most.count, jobs.length);
      for (const job of jobs) owners.add(job.metadata?.labels?.['sluice.io/owner'] ?? '');
      return jobs;
    };
    await explained(everything(), async () => {
      while (finished.size < 4) {
        // Wait for the pool to fill (two Jobs, or what is left), then hold it full for a while:
        // the executors claim every 100 ms, so a claim past the limit would show here.
        const want = Math.min(2, 4 - finished.size);
        const jobs = await eventually(
          `${want} running Jobs (${finished.size} of 4 ended)`,
          async () => {
            const now = await running();
            return now.length >= want ? now : null;
          },
          60_000,
          50,
        );
        for (let i = 0; i < 10; i++) {
          await running();
          await sleep(100);
        }
        for (const job of jobs) {
          const name = job.metadata?.name ?? '';
          const pod = await eventually(`the pod of ${name}`, async () => {
            const pods = await core.listNamespacedPod({
              namespace: NAMESPACE,
              labelSelector: `job-name=${name}`,
            });
            return pods.items[0] ?? null;
          });
          // Ending the pod (an eviction: FAILED lost, no retry) frees its place in the limit.
          finished.add(name);
          await core.replaceNamespacedPodStatus({
            name: pod.metadata?.name ?? '',
            namespace: NAMESPACE,
            body: { ...pod, status: { ...pod.status, phase: 'Failed', reason: 'Evicted' } },
          });
        }
      }
    });
    expect(most.count).toBeLessThanOrEqual(2);
    expect(most.count).toBe(2);
    for (const id of ids) await api.waitFor(id, ended, 60_000);
    expect([...owners].every((owner) => OWNERS.includes(owner))).toBe(true);
  }, 150_000);
});
