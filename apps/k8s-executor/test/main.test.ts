import { captureOutput } from '@sluice/testing';
import { main } from '../src/main';

/** main() in this process, its terminal in memory. */
const io = captureOutput;

const EXECUTOR = {
  EXECUTOR_API_URL: 'http://127.0.0.1:9',
  EXECUTOR_API_TOKEN: 'shared-token',
  INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0',
};

describe('sluice k8s-executor', () => {
  it('prints usage and the variables it reads for --help', async () => {
    const run = io();
    expect(await main(['k8s-executor', '--help'], run.io)).toBe(0);
    expect(run.out()).toContain('Usage: sluice k8s-executor');
    expect(run.out()).toContain('K8S_EXECUTOR_OWNER_ID_PREFIX');
    expect(run.out()).not.toContain('DOCKER_EXECUTOR_OWNER_ID');
  });

  it('refuses to start without an owner ID, naming both ways to set it', async () => {
    const run = io({ ...EXECUTOR });
    expect(await main(['k8s-executor'], run.io)).toBe(2);
    expect(run.err()).toContain('K8S_EXECUTOR_OWNER_ID or K8S_EXECUTOR_OWNER_ID_PREFIX');
  });

  it('refuses SLUICE_EXECUTORS=auto outside a pod, and says what runs today', async () => {
    const run = io({ ...EXECUTOR, K8S_EXECUTOR_OWNER_ID_PREFIX: 'blue', HOSTNAME: 'sluice-k8s-executor-0' });
    expect(await main(['k8s-executor'], run.io)).toBe(2);
    expect(run.err()).toContain('SLUICE_EXECUTORS: is auto');
    expect(run.err()).toContain('KUBERNETES_SERVICE_HOST is unset');
    expect(run.err()).toContain('SLUICE_EXECUTORS=process runs a process instance today');
  });

  it('refuses SLUICE_EXECUTORS=auto inside a pod when the Job dry run fails', async () => {
    // In a pod by its variables, but with no service account token: the dry run cannot succeed.
    const run = io({
      ...EXECUTOR,
      K8S_EXECUTOR_OWNER_ID: 'blue-0',
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: '9',
    });
    expect(await main(['k8s-executor'], run.io)).toBe(2);
    expect(run.err()).toContain('SLUICE_EXECUTORS: is auto');
    expect(run.err()).toContain('the Job dry run failed');
  }, 20_000);

  it('runs the runner for `exec`, which refuses to start without its variables', async () => {
    const run = io({});
    expect(await main(['exec'], run.io)).toBe(2);
    expect(run.err()).toContain('sluice exec:');
  });
});
