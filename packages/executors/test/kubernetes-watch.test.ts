import { eventually } from '@sluice/testing';
import { KubeClient, KubernetesExecutor, type ExecutorContext } from '../src';
import {
  containerStatus,
  describeKube,
  kubeContext,
  kubeSuite,
  kubeTaskRun,
  podOf,
  writePodStatus,
} from './kubernetes-fixtures';
import { startKubeProxy, type KubeProxy } from './kubernetes-proxy';

/**
 * The pod watch is a fast hint beside the poll: with a poll of 60 s, a pod's change still ends
 * the task run within seconds, also after a `410 Gone` and a dropped connection; stopping the
 * executor closes the watch. The proxy sits in front of the real API server for the 410 and the
 * drop, which the server does not produce on demand (its own 410 comes only once its watch
 * cache has moved past the version asked for, which a freshly started server has not).
 */

const IMAGE = 'busybox:1.36';
/** Far beyond what any assertion here waits: only the watch can end these task runs in time. */
const POLL_MS = 60_000;
/** "Well before the poll interval". */
const NOTICED_WITHIN_MS = 10_000;

let proxy: KubeProxy;
let ctx: ExecutorContext;

describeKube('KubernetesExecutor: the pod watch', () => {
  const suite = kubeSuite('sluice-watch');

  beforeEach(async () => {
    proxy = await startKubeProxy();
    ctx = kubeContext();
  });
  // After the suite's afterEach has shut the executors down.
  afterEach(async () => proxy.close());

  function executorThroughProxy(from?: string): KubernetesExecutor {
    return suite.executor({
      client: new KubeClient(proxy.config, suite.ns.name),
      pollIntervalMs: POLL_MS,
      heartbeatIntervalMs: 1_000,
      podWatch: { backoffMs: 100, ...(from ? { resourceVersion: from } : {}) },
    });
  }

  const kubeRun = () => kubeTaskRun('trw', { image: IMAGE, inject_runner: false });

  const watchRequests = () => proxy.requests.filter((r) => r.includes('watch=true'));
  const versionOf = (line: string | undefined) =>
    new URL(line?.split(' ')[1] ?? '/', 'http://x').searchParams.get('resourceVersion');
  const podLists = () => proxy.requests.filter((r) => r.includes('/pods?') && r.includes('limit=1'));

  /**
   * The executor looked at the Job's pod and went quiet (its poll sleeps 60 s): a look after
   * this comes from the watch. Also waits for the watch to be open.
   */
  async function executorIdle(job: string): Promise<void> {
    let count = -1;
    await eventually(
      'the executor idle, its pod watch open',
      async () => {
        const looked = proxy.requests.some((r) => r.includes(encodeURIComponent(`job-name=${job}`)));
        const quiet = proxy.requests.length === count;
        count = proxy.requests.length;
        return looked && quiet && proxy.openWatches() === 1;
      },
      10_000,
      500,
    );
  }

  it('ends the task run within seconds of the pod’s change, with a poll of 60 s', async () => {
    const executor = executorThroughProxy();
    const handle = await executor.start(kubeRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await executorIdle(handle.externalRef ?? '');
    const changedAt = Date.now();
    await writePodStatus(suite.ns, pod, {
      phase: 'Failed',
      containerStatuses: [
        containerStatus('task', IMAGE, { terminated: { exitCode: 137, reason: 'OOMKilled' } }),
      ],
    });
    const outcome = await executor.wait(handle);
    expect(Date.now() - changedAt).toBeLessThan(NOTICED_WITHIN_MS);
    expect(outcome.reason).toBe('pod_crash');
    expect(outcome.error).toContain('OOMKilled');
    // The watch is scoped to this owner's pods.
    expect(watchRequests()[0]).toContain(encodeURIComponent(`sluice.io/owner=${suite.ownerId}`));
  }, 60_000);

  it('survives a 410 Gone: lists again for a fresh resourceVersion and still notices the change', async () => {
    proxy.goneNext(1);
    const executor = executorThroughProxy();
    const handle = await executor.start(kubeRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await executorIdle(handle.externalRef ?? '');
    const [first, second] = watchRequests();
    // A list of at most one pod before each watch: the fresh version after the 410.
    expect(podLists()).toHaveLength(2);
    expect(Number(versionOf(second))).toBeGreaterThanOrEqual(Number(versionOf(first)));
    const changedAt = Date.now();
    await writePodStatus(suite.ns, pod, { phase: 'Succeeded' });
    expect(await executor.wait(handle)).toMatchObject({ exitCode: 0 });
    expect(Date.now() - changedAt).toBeLessThan(NOTICED_WITHIN_MS);
  }, 60_000);

  it('survives the API server’s own 410 for a resourceVersion older than its watch cache', async () => {
    const executor = executorThroughProxy('1');
    const handle = await executor.start(kubeRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await executorIdle(handle.externalRef ?? '');
    const watches = watchRequests();
    expect(versionOf(watches[0])).toBe('1');
    if (watches.length === 1) {
      // A freshly started API server still holds resourceVersion 1; the test above covers the 410 then.
      console.warn(
        'the API server answered a watch from resourceVersion 1 without 410 Gone (its watch cache starts there)',
      );
    } else {
      // The server's 410: one list for a fresh version, then a watch from it.
      expect(podLists()).toHaveLength(1);
      expect(Number(versionOf(watches[1]))).toBeGreaterThan(1);
    }
    const changedAt = Date.now();
    await writePodStatus(suite.ns, pod, { phase: 'Succeeded' });
    expect(await executor.wait(handle)).toMatchObject({ exitCode: 0 });
    expect(Date.now() - changedAt).toBeLessThan(NOTICED_WITHIN_MS);
  }, 60_000);

  it('survives a dropped connection: watches again from where it was', async () => {
    const executor = executorThroughProxy();
    const handle = await executor.start(kubeRun(), ctx);
    const pod = await podOf(suite.ns, handle.externalRef ?? '');
    await executorIdle(handle.externalRef ?? '');
    proxy.dropWatches();
    // The change happens while the watch is down: the new watch starts from the last version it saw.
    await writePodStatus(suite.ns, pod, {
      phase: 'Failed',
      reason: 'Evicted',
      message: 'The node was low on resource: memory.',
    });
    const changedAt = Date.now();
    const outcome = await executor.wait(handle);
    expect(Date.now() - changedAt).toBeLessThan(NOTICED_WITHIN_MS);
    expect(outcome.reason).toBe('lost');
    expect(watchRequests().length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('closes the watch on shutdown and opens no other', async () => {
    const executor = executorThroughProxy();
    await executor.start(kubeRun(), ctx);
    await eventually('the pod watch open', async () => proxy.openWatches() === 1, 10_000, 50);
    await executor.shutdown();
    await eventually('the pod watch closed', async () => proxy.openWatches() === 0, 5_000, 20);
    const watches = watchRequests().length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(watchRequests()).toHaveLength(watches);
  }, 60_000);
});
