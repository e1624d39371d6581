import type { V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';
import type { TaskRunReason } from '@sluice/protocol';

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

/**
 * The end a pod's status tells, or null while it may still run: an eviction is `lost`; a pull
 * error that lasted `pullGraceMs` is `image_pull`; a container (init or task) that terminated
 * non-zero, was OOMKilled or is in CrashLoopBackOff is `pod_crash`, named with its message.
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
  for (const [what, container] of containers) {
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
