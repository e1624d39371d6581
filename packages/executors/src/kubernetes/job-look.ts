import type { KubeClient } from './kube-client';
import {
  jobConditionEnd,
  noPodEnd,
  pendingEnd,
  podEnd,
  type JobEnd,
  type PullErrorsSince,
} from './pod-failure';

/** What one Job's looks remember between them. */
export interface JobLookState {
  pullSince: PullErrorsSince;
  /** Pod uids seen so far: one that disappears was deleted from outside. */
  pods: Set<string>;
}

export interface JobLookOptions {
  imagePullGraceMs: number;
  /** K8S_EXECUTOR_POD_PENDING_TIMEOUT */
  podPendingTimeoutMs: number;
}

/**
 * One full read of a Job and its pods: the end they tell (docs/kubernetes-executor.md, "How
 * the work ends"), or null while the work may still run.
 */
export async function lookAtJob(
  client: Pick<KubeClient, 'readJob' | 'jobPods' | 'eventsOf'>,
  name: string,
  seen: JobLookState,
  options: JobLookOptions,
): Promise<JobEnd | null> {
  const job = await client.readJob(name);
  if (!job || job.metadata?.deletionTimestamp) {
    return {
      kind: 'failed',
      reason: 'lost',
      exitCode: null,
      error: `Job ${name} was deleted before its runner reported a result`,
    };
  }
  const pods = await client.jobPods(name);
  const now = Date.now();
  for (const pod of pods) {
    const end = podEnd(pod, now, seen.pullSince, options.imagePullGraceMs);
    if (end) return end;
  }
  const present = new Set(pods.map((pod) => pod.metadata?.uid ?? ''));
  const gone = [...seen.pods].find((uid) => !present.has(uid));
  if (gone) {
    return {
      kind: 'failed',
      reason: 'lost',
      exitCode: null,
      error: `pod ${gone} of Job ${name} was deleted before its runner reported a result`,
    };
  }
  for (const pod of pods) if (pod.metadata?.uid) seen.pods.add(pod.metadata.uid);
  const fromJob = jobConditionEnd(job);
  if (fromJob) return fromJob;
  if (pods.length === 0) {
    return (await failedCreate(client, name)) ?? noPodEnd(job, now, options.podPendingTimeoutMs);
  }
  return pendingEnd(name, pods, now, options.podPendingTimeoutMs);
}

/** A Job without pods: the Job controller's FailedCreate event says why (a missing service account, a quota). */
async function failedCreate(client: Pick<KubeClient, 'eventsOf'>, job: string): Promise<JobEnd | null> {
  const events = await client.eventsOf('Job', job);
  const failed = events.filter((event) => event.reason === 'FailedCreate').at(-1);
  if (!failed) return null;
  return {
    kind: 'failed',
    reason: 'error',
    exitCode: null,
    error: `Job ${job} cannot create its pod: ${failed.message ?? 'FailedCreate'}`,
  };
}
