import type { DockerExecutorConfig, K8sExecutorConfig } from '@sluice/config';
import { INLINE_SLOTS, type SlotGroupConfig } from '@sluice/instance';

// Every layout's slot groups, side by side: buildInstance picks the one of its layout.

/**
 * A standalone server's embedded instance: process and docker share SLUICE_WORKER_SLOTS; inline
 * has its own 64; kubernetes, when it runs, claims as a k8s-executor does (no per-instance limit,
 * one task run every K8S_EXECUTOR_JOB_WORKER_INTERVAL).
 */
export function standaloneSlotGroups(workerSlots: number, k8sJobWorkerInterval?: number): SlotGroupConfig[] {
  return [
    { name: 'shared', executorTypes: ['process', 'docker'], slots: workerSlots },
    { name: 'inline', executorTypes: ['inline'], slots: INLINE_SLOTS },
    ...(k8sJobWorkerInterval !== undefined
      ? [
          {
            name: 'kubernetes',
            executorTypes: ['kubernetes' as const],
            slots: null,
            pollIntervalMs: k8sJobWorkerInterval,
          },
        ]
      : []),
  ];
}

/**
 * A docker-executor (docs/decisions.md §3): process and docker task runs share
 * DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS and are claimed every
 * DOCKER_EXECUTOR_JOB_WORKER_INTERVAL (SLUICE_QUEUE_POLL_INTERVAL unless
 * set); inline has its own 64.
 */
export function dockerExecutorSlotGroups(config: DockerExecutorConfig): SlotGroupConfig[] {
  return [
    {
      name: 'shared',
      executorTypes: ['process', 'docker'],
      slots: config.docker.maxConcurrentJobs,
      pollIntervalMs: config.docker.jobWorkerInterval,
    },
    { name: 'inline', executorTypes: ['inline'], slots: INLINE_SLOTS },
  ];
}

/**
 * A k8s-executor: kubernetes has no per-instance limit and claims one task run
 * every K8S_EXECUTOR_JOB_WORKER_INTERVAL (SLUICE_K8S_MAX_JOBS per pool is
 * enforced inside the claim); process, when listed, has SLUICE_WORKER_SLOTS and
 * the instance's poll interval; inline has 64.
 */
export function k8sExecutorSlotGroups(config: K8sExecutorConfig): SlotGroupConfig[] {
  return [
    {
      name: 'process',
      executorTypes: ['process'],
      slots: config.instance.workerSlots,
      pollIntervalMs: config.instance.queuePollInterval,
    },
    {
      name: 'kubernetes',
      executorTypes: ['kubernetes'],
      slots: null,
      pollIntervalMs: config.k8s.jobWorkerInterval,
    },
    { name: 'inline', executorTypes: ['inline'], slots: INLINE_SLOTS },
  ];
}
