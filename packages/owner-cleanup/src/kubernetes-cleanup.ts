import {
  errorMessage,
  KUBE_LABELS,
  kubeErrorMessage,
  type ExecutorContext,
  type KubeClient,
  type KubernetesExecutor,
  type Logger,
} from '@sluice/executors';
import type { ExecutorProtocol } from '@sluice/protocol';
import { startPassLoop, type CleanupLoop } from './cleanup-loop';
import type { AdoptionTarget } from './docker-adoption';

export interface KubernetesCleanupOptions {
  client: KubeClient;
  executor: KubernetesExecutor;
  /** K8S_EXECUTOR_OWNER_ID: only Jobs and Secrets with this `sluice.io/owner` are looked at. */
  ownerId: string;
  protocol: Pick<ExecutorProtocol, 'isStillRunning'>;
  ctx: ExecutorContext;
  instance: AdoptionTarget;
  log: Pick<Logger, 'info' | 'warn'>;
}

export interface KubernetesCleanupResult {
  /** Job names deleted: their task run ended, is unknown to the server, or they name none. */
  deletedJobs: string[];
  /** Secrets deleted that no Job owns (an executor that died between the two creates). */
  deletedSecrets: string[];
  /** Job names handed to the executor and the instance. */
  adopted: string[];
  /** Job names left alone: watched here already, or the server could not be asked. */
  kept: string[];
}

/**
 * docs/decisions.md §9 for Jobs: one full list (paged) of this owner's Jobs is the source of
 * truth; for each, the server says whether its task run still runs: adopted when it does,
 * deleted (foreground, so the pod and the Secret go too) when it does not or is unknown, kept
 * when the server cannot be asked. Secrets of this owner that no Job owns are deleted too.
 */
export async function runKubernetesCleanup(
  options: KubernetesCleanupOptions,
): Promise<KubernetesCleanupResult> {
  const { client, executor, ownerId, protocol, log } = options;
  const result: KubernetesCleanupResult = { deletedJobs: [], deletedSecrets: [], adopted: [], kept: [] };
  const selector = `${KUBE_LABELS.owner}=${ownerId}`;
  const watched = new Set(executor.tracked());
  const verdicts = new Map<string, boolean | null>();
  const stillRunning = async (taskRunId: string): Promise<boolean | null> => {
    if (!verdicts.has(taskRunId)) {
      verdicts.set(
        taskRunId,
        await protocol.isStillRunning(taskRunId).catch((err: unknown) => {
          log.warn('cleanup could not ask whether a task run still runs; keeping its Job for now', {
            taskRunId,
            error: errorMessage(err),
          });
          return null;
        }),
      );
    }
    return verdicts.get(taskRunId) ?? null;
  };

  for (const job of await client.listJobs(selector)) {
    const name = job.metadata?.name ?? '';
    // The API server filtered already; checking again keeps a mis-filter from costing another owner's work.
    if (!name || job.metadata?.labels?.[KUBE_LABELS.owner] !== ownerId) continue;
    if (job.metadata?.deletionTimestamp) continue;
    const taskRunId = job.metadata?.labels?.[KUBE_LABELS.taskRun];
    if (taskRunId && watched.has(taskRunId)) {
      result.kept.push(name);
      continue;
    }
    const running = taskRunId ? await stillRunning(taskRunId) : false;
    if (running === null) {
      result.kept.push(name);
      continue;
    }
    if (running) {
      const adopted = executor.adopt(job, options.ctx);
      if (adopted && !options.instance.adopt(adopted.run, adopted.handle)) {
        // The instance is stopping: leave the Job to the next executor with this owner ID.
        executor.release(adopted.handle.taskRunId);
        result.kept.push(name);
        continue;
      }
      result.adopted.push(name);
      log.info('adopted a Job whose task run still runs', { taskRunId, job: name });
      continue;
    }
    try {
      await client.deleteJob(name);
      result.deletedJobs.push(name);
      log.info('deleted a Job whose task run is not running', { taskRunId, job: name });
    } catch (err) {
      log.warn('deleting a leftover Job failed', { job: name, error: kubeErrorMessage(err) });
      result.kept.push(name);
    }
  }

  for (const secret of await client.listSecrets(selector)) {
    const name = secret.metadata?.name ?? '';
    if (!name || secret.metadata?.labels?.[KUBE_LABELS.owner] !== ownerId) continue;
    // Owned by a Job: the garbage collector removes it with the Job.
    if ((secret.metadata?.ownerReferences ?? []).length > 0) continue;
    const taskRunId = secret.metadata?.labels?.[KUBE_LABELS.taskRun];
    if (taskRunId && watched.has(taskRunId)) continue;
    const running = taskRunId ? await stillRunning(taskRunId) : false;
    if (running !== false) continue;
    try {
      await client.deleteSecret(name);
      result.deletedSecrets.push(name);
    } catch (err) {
      log.warn('deleting a leftover Secret failed', { secret: name, error: kubeErrorMessage(err) });
    }
  }
  return result;
}

/** The pass at start (adopted work takes its slots before the first claim) and every K8S_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL. */
export function startKubernetesCleanup(
  options: KubernetesCleanupOptions & { intervalMs: number },
): CleanupLoop {
  return startPassLoop(() => runKubernetesCleanup(options), options.intervalMs, options.log, 'Job cleanup');
}
