import type { V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';
import type { TaskRunReason } from '@sluice/protocol';
import { SYNC_CONTAINERS } from './sync-pod';

/** Waiting reasons that mean the image cannot be pulled (they can clear, hence a grace). */
export const IMAGE_PULL_REASONS: ReadonlySet<string> = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
]);

/** How a Job's work ended without (necessarily) a result from its runner. */
export interface JobEnd {
  /** `succeeded`: the pod ended well; the runner reported the result itself. */
  kind: 'succeeded' | 'failed';
  reason?: TaskRunReason;
  error?: string;
  exitCode: number | null;
}

/** Per Job: when each container was first seen failing to pull, so a short-lived pull error is waited out. */
export type PullErrorsSince = Map<string, number>;

const SYNC_RUNNER_CONTAINER = SYNC_CONTAINERS.runner;
/** Terminated reasons of a container that never ran its command (its wrapper cannot report that). */
const NEVER_STARTED_REASONS: ReadonlySet<string> = new Set(['StartError', 'ContainerCannotRun']);

/**
 * The end a pod's status tells, or null while it may still run: an eviction is `lost`; a pull
 * error that lasted `pullGraceMs` is `image_pull`; a container (init or task) that terminated
 * non-zero, was OOMKilled or is in CrashLoopBackOff is `pod_crash`, named with its message.
 * In a sync pod (docs/connectors.md#sync-on-kubernetes) the runner's container decides: a
 * connector's exit is the runner's to report, so it ends nothing unless the connector's
 * container never started; the runner's exit 0 ends the pod's work.
 */
export function podEnd(
  pod: V1Pod,
  now: number,
  pullSince: PullErrorsSince,
  pullGraceMs: number,
): JobEnd | null {
  const podName = pod.metadata?.name ?? '?';
  const status = pod.status;
  if (status?.phase === 'Succeeded') return { kind: 'succeeded', exitCode: 0 };
  if (status?.reason === 'Evicted') {
    return {
      kind: 'failed',
      reason: 'lost',
      exitCode: null,
      error: `pod ${podName} was evicted${status.message ? `: ${status.message}` : ''}`,
    };
  }
  const containers: Array<[string, V1ContainerStatus]> = [
    ...(status?.initContainerStatuses ?? []).map((c): [string, V1ContainerStatus] => ['init container', c]),
    ...(status?.containerStatuses ?? []).map((c): [string, V1ContainerStatus] => ['container', c]),
  ];
  const sync = pod.spec?.containers.some((c) => c.name === SYNC_RUNNER_CONTAINER) ?? false;
  for (const [what, container] of containers) {
    const connector = sync && what === 'container' && container.name !== SYNC_RUNNER_CONTAINER;
    const key = `${pod.metadata?.uid ?? podName}/${container.name}`;
    const waiting = container.state?.waiting;
    if (waiting?.reason && IMAGE_PULL_REASONS.has(waiting.reason)) {
      const since = pullSince.get(key) ?? now;
      pullSince.set(key, since);
      if (now - since >= pullGraceMs) {
        return {
          kind: 'failed',
          reason: 'image_pull',
          exitCode: null,
          error: `${what} ${container.name} of pod ${podName} cannot pull its image ${container.image}: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`,
        };
      }
      continue;
    }
    pullSince.delete(key);
    if (waiting?.reason === 'CrashLoopBackOff') {
      return {
        kind: 'failed',
        reason: 'pod_crash',
        exitCode: null,
        error: `${what} ${container.name} of pod ${podName} is in CrashLoopBackOff${waiting.message ? `: ${waiting.message}` : ''}`,
      };
    }
    const terminated = container.state?.terminated;
    if (connector && !NEVER_STARTED_REASONS.has(terminated?.reason ?? '')) continue;
    if (terminated && (terminated.exitCode !== 0 || terminated.reason === 'OOMKilled')) {
      const why = [terminated.reason, `exit code ${terminated.exitCode}`].filter(Boolean).join(', ');
      return {
        kind: 'failed',
        reason: 'pod_crash',
        exitCode: terminated.exitCode,
        error: `${what} ${container.name} of pod ${podName} terminated (${why}) without its runner reporting a result${terminated.message ? `: ${terminated.message.trim()}` : ''}`,
      };
    }
  }
  const runner = sync
    ? status?.containerStatuses?.find((c) => c.name === SYNC_RUNNER_CONTAINER)?.state?.terminated
    : undefined;
  if (runner?.exitCode === 0) return { kind: 'succeeded', exitCode: 0 };
  if (status?.phase === 'Failed') {
    return {
      kind: 'failed',
      reason: 'pod_crash',
      exitCode: null,
      error: `pod ${podName} failed${status.reason ? ` (${status.reason})` : ''}${status.message ? `: ${status.message}` : ''}`,
    };
  }
  return null;
}

/** The end a Job's own conditions tell (after its pods told nothing), or null. */
export function jobConditionEnd(job: V1Job): JobEnd | null {
  const name = job.metadata?.name ?? '?';
  for (const condition of job.status?.conditions ?? []) {
    if (condition.status !== 'True') continue;
    if (condition.type === 'Complete') return { kind: 'succeeded', exitCode: 0 };
    if (condition.type === 'Failed') {
      const deadline = condition.reason === 'DeadlineExceeded';
      return {
        kind: 'failed',
        reason: deadline ? 'timeout' : 'pod_crash',
        exitCode: null,
        error: `Job ${name} failed (${condition.reason ?? 'no reason'})${condition.message ? `: ${condition.message}` : ''}`,
      };
    }
  }
  return null;
}

/** What keeps a pod from a node: since when and why, or null once it is placed (or past Pending). */
export interface Unscheduled {
  /** Epoch ms: its PodScheduled=False transition, else the pod's creation. */
  since: number;
  /** `Unschedulable: 0/3 nodes are available: …`, or what is known without a scheduler's word. */
  why: string;
}

export function unscheduled(pod: V1Pod): Unscheduled | null {
  if ((pod.status?.phase ?? 'Pending') !== 'Pending' || pod.spec?.nodeName) return null;
  const condition = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (condition?.status === 'True') return null;
  const since = epoch(condition?.lastTransitionTime) ?? epoch(pod.metadata?.creationTimestamp) ?? Date.now();
  if (condition?.status === 'False') {
    const why = [condition.reason, condition.message].filter(Boolean).join(': ');
    return { since, why: why || 'PodScheduled is False' };
  }
  return { since, why: 'no node was assigned (no PodScheduled condition: is a scheduler running?)' };
}

/** `10m`, `90s`, `1500ms`: a duration as K8S_EXECUTOR_POD_PENDING_TIMEOUT is written. */
export function formatDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}

/**
 * The end of a pod that stayed unscheduled past the pending timeout (a FAILED `error` naming
 * the scheduler's reason and the variable), or null while it may still be placed.
 */
export function pendingEnd(job: string, pods: V1Pod[], now: number, timeoutMs: number): JobEnd | null {
  for (const pod of pods) {
    const waiting = unscheduled(pod);
    if (!waiting || now - waiting.since < timeoutMs) continue;
    return {
      kind: 'failed',
      reason: 'error',
      exitCode: null,
      error: `pod ${pod.metadata?.name ?? '?'} of Job ${job} was not scheduled within ${formatDuration(timeoutMs)} (K8S_EXECUTOR_POD_PENDING_TIMEOUT): ${waiting.why}`,
    };
  }
  return null;
}

/** A Job that created no pod (and said nothing about why) past the pending timeout. */
export function noPodEnd(jobObject: V1Job, now: number, timeoutMs: number): JobEnd | null {
  const created = epoch(jobObject.metadata?.creationTimestamp);
  if (created === null || now - created < timeoutMs) return null;
  return {
    kind: 'failed',
    reason: 'error',
    exitCode: null,
    error: `Job ${jobObject.metadata?.name ?? '?'} created no pod within ${formatDuration(timeoutMs)} (K8S_EXECUTOR_POD_PENDING_TIMEOUT) and its controller reported no FailedCreate`,
  };
}

function epoch(value: Date | string | undefined): number | null {
  if (value === undefined) return null;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? null : ms;
}
