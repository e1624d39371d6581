import { parseEnv } from '@sluice/config';
import { dockerExecutorSlotGroups, k8sExecutorSlotGroups } from '../src/slot-groups';

const EXECUTOR = { EXECUTOR_API_URL: 'http://sluice-internal:8081', EXECUTOR_API_TOKEN: 'shared-token' };

describe('slot groups of the executor apps', () => {
  it('docker-executor: process and docker share DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS; inline has 64', () => {
    const config = parseEnv('docker-executor', {
      ...EXECUTOR,
      DOCKER_EXECUTOR_OWNER_ID: 'host-a',
      DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS: '2',
      SLUICE_QUEUE_POLL_INTERVAL: '3s',
    });
    expect(dockerExecutorSlotGroups(config)).toEqual([
      { name: 'shared', executorTypes: ['process', 'docker'], slots: 2, pollIntervalMs: 3000 },
      { name: 'inline', executorTypes: ['inline'], slots: 64 },
    ]);
  });

  it('docker-executor: DOCKER_EXECUTOR_JOB_WORKER_INTERVAL overrides the poll interval', () => {
    const config = parseEnv('docker-executor', {
      ...EXECUTOR,
      DOCKER_EXECUTOR_OWNER_ID: 'host-a',
      SLUICE_QUEUE_POLL_INTERVAL: '3s',
      DOCKER_EXECUTOR_JOB_WORKER_INTERVAL: '500ms',
    });
    expect(dockerExecutorSlotGroups(config)[0]).toMatchObject({ slots: 5, pollIntervalMs: 500 });
  });

  it('k8s-executor: kubernetes has no per-instance limit and its own interval; process and inline have slots', () => {
    const config = parseEnv('k8s-executor', {
      ...EXECUTOR,
      K8S_EXECUTOR_OWNER_ID: 'blue-0',
      SLUICE_QUEUE_POLL_INTERVAL: '2s',
      K8S_EXECUTOR_JOB_WORKER_INTERVAL: '10s',
    });
    expect(k8sExecutorSlotGroups(config)).toEqual([
      { name: 'process', executorTypes: ['process'], slots: 8, pollIntervalMs: 2000 },
      { name: 'kubernetes', executorTypes: ['kubernetes'], slots: null, pollIntervalMs: 10_000 },
      { name: 'inline', executorTypes: ['inline'], slots: 64 },
    ]);
  });

  it('k8s-executor: SLUICE_WORKER_SLOTS sets its process slots', () => {
    const config = parseEnv('k8s-executor', {
      ...EXECUTOR,
      K8S_EXECUTOR_OWNER_ID: 'blue-0',
      SLUICE_WORKER_SLOTS: '3',
    });
    expect(k8sExecutorSlotGroups(config)[0]).toMatchObject({ name: 'process', slots: 3 });
  });
});
