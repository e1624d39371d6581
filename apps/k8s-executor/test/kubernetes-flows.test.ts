import { randomBytes } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import { ended, explained, SLUICE, userApi } from '@sluice/testing';
import {
  containerEnv,
  describeKube,
  jobGone as jobGoneIn,
  kube,
  kubeApis,
  newJob as newJobOf,
  runHere,
  secretGone,
  startK8sExecutor,
  useKubeTopology,
  writeJobPodStatus,
} from './kube-flow-fixtures';

/**
 * A flow's kubernetes task end to end: a real server, `sluice jobs` and `sluice k8s-executor`
 * on the real API server. There is no kubelet: the test plays it, reading the Secret as the
 * kubelet would, running the pod's command (`sluice exec`) locally with the pod's environment
 * against the server's runner API, then writing the pod Succeeded.
 */

const OWNER = `k8s-e2e-${randomBytes(3).toString('hex')}`;
const NAMESPACE = `sluice-e2e-${randomBytes(3).toString('hex')}`;
const apis = kubeApis(NAMESPACE);

const topology = useKubeTopology(apis, OWNER, Boolean(kube));

/** Runs the pod's command here, with the environment the kubelet would give the task container. */
async function playKubelet(job: V1Job): Promise<{ code: number | null; output: string }> {
  const container = job.spec?.template.spec?.containers[0];
  const env = await containerEnv(apis, container);
  expect(container?.command).toEqual(['sluice', 'exec']);
  return runHere(process.execPath, [SLUICE, 'exec'], env);
}

const newJob = (seen: Set<string>, attempt: number) => newJobOf(apis, OWNER, seen, attempt);
const writePodStatus = (job: V1Job, status: Record<string, unknown>) => writeJobPodStatus(apis, job, status);
const jobGone = (job: V1Job) => jobGoneIn(apis, job);

const seen = new Set<string>();

describeKube('kubernetes executor: a flow in a Job', () => {
  it('runs the task through the pod’s command and ends SUCCEEDED with its logs and outputs; the Job goes', async () => {
    if (!topology) return;
    const { server, everything } = topology;
    const api = await userApi(server, 'admin');
    const flow = [
      'retry: { max_attempts: 1 }',
      'tasks:',
      '  - id: main',
      '    type: command',
      '    executor: { type: kubernetes, image: "busybox:1.36", inject_runner: false }',
      `    command: ${JSON.stringify(['sh', '-c', 'echo hello from the pod; echo "answer=42" >> "$SLUICE_OUTPUTS"'])}`,
      '',
    ].join('\n');
    expect((await api.putFlow('kube', 'hello', flow)).status).toBe(200);
    const id = await api.run('kube', 'hello');

    const job = await explained(everything(), () => newJob(seen, 1));
    const runner = await playKubelet(job);
    expect({ code: runner.code, output: runner.output }).toMatchObject({ code: 0 });
    await writePodStatus(job, { phase: 'Succeeded' });

    const execution = await explained(everything(), () => api.waitFor(id, ended, 60_000));
    expect(execution.state).toBe('SUCCEEDED');
    const [run] = execution.taskRuns;
    expect(run).toMatchObject({ state: 'SUCCEEDED', ownerId: OWNER, externalRef: job.metadata?.name });
    expect(run!.outputs).toEqual({ answer: '42' });
    const logs = await api.logs(run!.id);
    expect(logs.filter((l) => l.stream === 'stdout').map((l) => l.line)).toEqual(['hello from the pod']);
    await explained(everything(), () => jobGone(job));
  }, 120_000);
  it('cancels through the Job: the executor deletes it, its Secret goes, the task run ends CANCELLED', async () => {
    if (!topology) return;
    const { server, everything } = topology;
    const api = await userApi(server, 'admin');
    const flow = [
      'tasks:',
      '  - id: main',
      '    type: command',
      '    executor: { type: kubernetes, image: "busybox:1.36", inject_runner: false }',
      '    command: ["sleep", "600"]',
      '',
    ].join('\n');
    expect((await api.putFlow('kube', 'long', flow)).status).toBe(200);
    const id = await api.run('kube', 'long');
    const job = await explained(everything(), () => newJob(seen, 1));
    expect((await api.call('POST', `/api/v1/executions/${id}/cancel`)).status).toBeLessThan(300);
    const execution = await explained(everything(), () => api.waitFor(id, ended, 60_000));
    expect(execution.taskRuns[0]).toMatchObject({ state: 'CANCELLED' });
    await jobGone(job);
    await secretGone(apis, job);
  }, 120_000);

  it('fails an evicted attempt lost and retries it in a new Job for attempt 2', async () => {
    if (!topology) return;
    const { server, everything } = topology;
    const api = await userApi(server, 'admin');
    const flow = [
      'retry: { max_attempts: 2 }',
      'tasks:',
      '  - id: main',
      '    type: command',
      '    executor: { type: kubernetes, image: "busybox:1.36", inject_runner: false }',
      '    command: ["echo", "second time lucky"]',
      '',
    ].join('\n');
    expect((await api.putFlow('kube', 'evicted', flow)).status).toBe(200);
    const id = await api.run('kube', 'evicted');
    const first = await explained(everything(), () => newJob(seen, 1));
    await writePodStatus(first, {
      phase: 'Failed',
      reason: 'Evicted',
      message: 'The node was low on resource: memory.',
    });
    await jobGone(first);
    const second = await explained(everything(), () => newJob(seen, 2));
    expect(second.metadata?.labels?.['sluice.io/task-run']).not.toBe(
      first.metadata?.labels?.['sluice.io/task-run'],
    );
    expect((await playKubelet(second)).code).toBe(0);
    await writePodStatus(second, { phase: 'Succeeded' });
    const execution = await explained(everything(), () => api.waitFor(id, ended, 60_000));
    expect(execution.state).toBe('SUCCEEDED');
    const attempts = [...execution.taskRuns].sort((a, b) => a.attempt - b.attempt);
    expect(attempts[0]).toMatchObject({ attempt: 1, state: 'FAILED', reason: 'lost' });
    expect(attempts[0]).toMatchObject({ error: expect.stringContaining('evicted') });
    expect(attempts[1]).toMatchObject({ attempt: 2, state: 'SUCCEEDED' });
  }, 120_000);
  it('survives a restart of its executor: the new one adopts the running Job, which ends SUCCEEDED', async () => {
    if (!topology) return;
    const { server, everything } = topology;
    const api = await userApi(server, 'admin');
    const flow = [
      'retry: { max_attempts: 1 }',
      'tasks:',
      '  - id: main',
      '    type: command',
      '    executor: { type: kubernetes, image: "busybox:1.36", inject_runner: false }',
      `    command: ${JSON.stringify(['sh', '-c', 'sleep 6; echo survived'])}`,
      '',
    ].join('\n');
    expect((await api.putFlow('kube', 'restart', flow)).status).toBe(200);
    const id = await api.run('kube', 'restart');
    const job = await explained(everything(), () => newJob(seen, 1));
    // The runner runs (and heartbeats) through the executor's restart, as in a pod.
    const runner = playKubelet(job);
    await api.waitFor(id, (e) => e.taskRuns.some((r) => r.state === 'RUNNING'), 30_000);
    await topology.executor.stop();
    topology.executor = await startK8sExecutor(server, OWNER, NAMESPACE);
    await explained(everything(), () =>
      topology.executor.waitForOutput('adopted a Job whose task run still runs', 30_000),
    );
    expect((await runner).code).toBe(0);
    await writePodStatus(job, { phase: 'Succeeded' });
    const execution = await explained(everything(), () => api.waitFor(id, ended, 60_000));
    expect(execution.taskRuns[0]).toMatchObject({ state: 'SUCCEEDED', ownerId: OWNER });
    const logs = await api.logs(execution.taskRuns[0]!.id);
    expect(logs.map((l) => l.line)).toContain('survived');
    await jobGone(job);
  }, 120_000);
});
