import { randomBytes } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import type { ClaimedTaskRun } from '@sluice/protocol';
import { KubernetesExecutor, RUN_TOKEN_KEY, type ExecutorContext, type TaskRunHandle } from '../src';
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
 * The Job of a sync task run (docs/connectors.md#sync-on-kubernetes): one pod with the runner,
 * the source and the destination sharing a FIFO emptyDir, the token in the runner's container
 * only; and how its containers' states end the work (the runner's decide).
 */

const SOURCE_IMAGE = 'example/source-sequence:1';
const DESTINATION_IMAGE = 'example/destination-postgres:1';
const LOADER = [
  '/sluice-bin/lib/ld-linux-x86-64.so.2',
  '--library-path',
  '/sluice-bin/lib',
  '/sluice-bin/sluice',
];
const MOUNTS = [
  { name: 'sluice-bin', mountPath: '/sluice-bin' },
  { name: 'sluice-sync', mountPath: '/sluice-sync' },
];
let ctx: ExecutorContext;
let executor: KubernetesExecutor;

function syncRun(executorBlock: Partial<ClaimedTaskRun['executor']> = {}): ClaimedTaskRun {
  return kubeTaskRun(
    'trs',
    { image: undefined, ...executorBlock },
    {
      runToken: `tok-${randomBytes(16).toString('hex')}`,
      task: {
        type: 'sync',
        source: { image: SOURCE_IMAGE, config: { records_per_stream: 10 } },
        destination: {
          image: DESTINATION_IMAGE,
          command: ['node', '/app/main.cjs'],
          config: { url: { secret: 'pg-url' } },
        },
        catalog: { streams: [] },
      },
    },
  );
}

describeKube('KubernetesExecutor: the Job of a sync', () => {
  const suite = kubeSuite('sluice-ksync');

  beforeEach(() => {
    ctx = kubeContext('http://sluice-server.sluice:8081');
    executor = suite.executor({ defaultResources: { cpu: '250m', memory: '128Mi' }, imagePullGraceMs: 500 });
  });

  const jobGone = (handle: TaskRunHandle) => jobDeleted(suite.ns, handle.externalRef ?? '');
  const running = (name: string, image: string) =>
    containerStatus(name, image, { running: { startedAt: new Date() } });
  const exited = (name: string, image: string, exitCode: number, reason = exitCode ? 'Error' : 'Completed') =>
    containerStatus(name, image, { terminated: { exitCode, reason } });

  it('holds the runner, source and destination in one pod with the FIFO emptyDir; the token only in the runner', async () => {
    const run = syncRun();
    const handle = await executor.start(run, ctx);
    const name = handle.externalRef ?? '';
    const job = await suite.ns.client.readJob(name);
    const labels = {
      'sluice.io/owner': suite.ownerId,
      'sluice.io/task-run': run.taskRunId,
      'sluice.io/attempt': '1',
    };
    expect(job?.metadata?.labels).toMatchObject(labels);
    expect(job?.spec?.backoffLimit).toBe(0);
    const pod = job?.spec?.template.spec;
    expect(pod?.restartPolicy).toBe('Never');
    expect(pod?.volumes).toEqual([
      { name: 'sluice-bin', emptyDir: {} },
      { name: 'sluice-sync', emptyDir: {} },
    ]);
    expect(pod?.initContainers?.map((c) => [c.image, c.command, c.volumeMounts])).toEqual([
      [
        TEST_RUNNER_IMAGE,
        ['/usr/local/bin/sluice', 'runner-install', '/sluice-bin', '--sync-layout', '/sluice-sync'],
        MOUNTS,
      ],
    ]);
    const containers = Object.fromEntries((pod?.containers ?? []).map((c) => [c.name, c]));
    expect(pod?.containers.map((c) => c.name)).toEqual(['runner', 'source', 'destination']);
    const { runner, source, destination } = containers;
    // No executor.image: the runner image, its runner started through the injected copy.
    expect(runner?.image).toBe(TEST_RUNNER_IMAGE);
    expect(runner?.command).toEqual([...LOADER, 'exec']);
    expect(source?.image).toBe(SOURCE_IMAGE);
    // The source's command is its image's AIRBYTE_ENTRYPOINT, read by the wrapper; the destination names one.
    expect(source?.command).toEqual([
      ...LOADER,
      'connector-pipe',
      '--dir',
      '/sluice-sync',
      '--role',
      'source',
    ]);
    expect(destination?.image).toBe(DESTINATION_IMAGE);
    expect(destination?.command).toEqual([
      ...LOADER,
      'connector-pipe',
      '--dir',
      '/sluice-sync',
      '--role',
      'destination',
      '--',
      'node',
      '/app/main.cjs',
    ]);
    for (const container of [runner, source, destination]) {
      expect(container?.volumeMounts).toEqual(MOUNTS);
      expect(container?.resources).toEqual({
        requests: { cpu: '250m', memory: '128Mi' },
        limits: { cpu: '250m', memory: '128Mi' },
      });
    }
    const env = Object.fromEntries((runner?.env ?? []).map((e) => [e.name, e]));
    expect(env.SLUICE_RUN_TOKEN?.valueFrom?.secretKeyRef?.key).toBe(RUN_TOKEN_KEY);
    expect(env.SLUICE_SYNC_DIR?.value).toBe('/sluice-sync');
    expect(env.TMPDIR?.value).toBe('/sluice-sync/work');
    // The connectors get no token, no secret, nothing of the runner's environment.
    for (const connector of [source, destination]) {
      // An empty value is stored as none: the kubelet sets NODE_OPTIONS to "" either way.
      expect(connector?.env?.map((e) => [e.name, e.value ?? '', e.valueFrom])).toEqual([
        ['NODE_OPTIONS', '', undefined],
      ]);
    }

    const podObject = await podOf(suite.ns, name);
    for (const manifest of [job, podObject]) {
      const text = JSON.stringify(manifest);
      expect(text).not.toContain(run.runToken);
      expect(text).not.toContain(Buffer.from(run.runToken).toString('base64'));
    }
    await executor.cancel(handle);
    expect((await executor.wait(handle)).cancelled).toBe(true);
    await jobGone(handle);
  }, 120_000);

  it('a connector that exits while the runner runs ends nothing; the runner’s exit decides, naming it', async () => {
    const handle = await executor.start(syncRun(), ctx);
    const pod: V1Pod = await podOf(suite.ns, handle.externalRef ?? '');
    await writePodStatus(suite.ns, pod, {
      phase: 'Running',
      containerStatuses: [
        running('runner', TEST_RUNNER_IMAGE),
        exited('source', SOURCE_IMAGE, 0),
        exited('destination', DESTINATION_IMAGE, 1),
      ],
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await executor.status(handle)).toBe('running');
    await writePodStatus(suite.ns, pod, {
      phase: 'Failed',
      containerStatuses: [
        exited('runner', TEST_RUNNER_IMAGE, 1),
        exited('source', SOURCE_IMAGE, 0),
        exited('destination', DESTINATION_IMAGE, 1),
      ],
    });
    const outcome = await executor.wait(handle);
    expect(outcome).toMatchObject({ reason: 'pod_crash', exitCode: 1 });
    expect(outcome.error).toContain('container runner of pod');
    await jobGone(handle);
  }, 60_000);

  it('the runner’s exit 0 ends the work even while a connector’s container still stops', async () => {
    const handle = await executor.start(syncRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await writePodStatus(suite.ns, pod, {
      phase: 'Running',
      containerStatuses: [
        exited('runner', TEST_RUNNER_IMAGE, 0),
        exited('source', SOURCE_IMAGE, 0),
        running('destination', DESTINATION_IMAGE),
      ],
    });
    expect(await executor.wait(handle)).toMatchObject({ exitCode: 0 });
    await jobGone(handle);
  }, 60_000);

  it('fails image_pull naming the connector’s container that cannot pull', async () => {
    const handle = await executor.start(syncRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await writePodStatus(suite.ns, pod, {
      phase: 'Pending',
      containerStatuses: [
        running('runner', TEST_RUNNER_IMAGE),
        containerStatus('source', SOURCE_IMAGE, { waiting: { reason: 'ImagePullBackOff' } }),
        running('destination', DESTINATION_IMAGE),
      ],
    });
    const outcome = await executor.wait(handle);
    expect(outcome.reason).toBe('image_pull');
    expect(outcome.error).toContain(`container source of pod`);
    expect(outcome.error).toContain(SOURCE_IMAGE);
    await jobGone(handle);
  }, 60_000);

  it('fails pod_crash naming a connector’s container that could not start (its wrapper cannot report)', async () => {
    const handle = await executor.start(syncRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await writePodStatus(suite.ns, pod, {
      phase: 'Running',
      containerStatuses: [
        running('runner', TEST_RUNNER_IMAGE),
        running('source', SOURCE_IMAGE),
        exited('destination', DESTINATION_IMAGE, 128, 'StartError'),
      ],
    });
    const outcome = await executor.wait(handle);
    expect(outcome.reason).toBe('pod_crash');
    expect(outcome.error).toContain('container destination of pod');
    expect(outcome.error).toContain('StartError');
    await jobGone(handle);
  }, 60_000);

  it('is adopted by a restarted executor of the same owner as one Job, which it watches to its end', async () => {
    const run = syncRun({ image: 'example/runner-base:1' });
    const handle = await executor.start(run, ctx);
    const job = await suite.ns.client.readJob(handle.externalRef ?? '');
    await executor.shutdown();
    const second = suite.executor();
    try {
      const adopted = second.adopt(job!, ctx);
      expect(adopted?.run).toMatchObject({
        taskRunId: run.taskRunId,
        attempt: 1,
        fence: run.fence,
        executor: { type: 'kubernetes', image: 'example/runner-base:1' },
      });
      expect(adopted?.handle.externalRef).toBe(handle.externalRef);
      const pod = await podOf(suite.ns, handle.externalRef ?? '');
      await writePodStatus(suite.ns, pod, {
        phase: 'Succeeded',
        containerStatuses: [
          exited('runner', 'example/runner-base:1', 0),
          exited('source', SOURCE_IMAGE, 0),
          exited('destination', DESTINATION_IMAGE, 0),
        ],
      });
      expect(await second.wait(adopted!.handle)).toMatchObject({ exitCode: 0 });
      await jobGone(handle);
    } finally {
      await second.shutdown();
    }
  }, 60_000);
});
