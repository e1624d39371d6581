import type { V1Job } from '@kubernetes/client-node';
import type { ClaimedTaskRun, Resources } from '@sluice/protocol';
import { errorMessage, isStaleFenceError } from '../errors';
import type { Executor, ExecutorContext, ExecutorOutcome, ExecutorStatus, TaskRunHandle } from '../executor';
import { TaskRunStartError } from '../start-error';
import { KUBE_LABELS, jobManifest, secretManifest, taskRunOfJob } from './job-manifest';
import { isKubeStatus, kubeErrorMessage, type KubeClient } from './kube-client';
import { lookAtJob, type JobLookState } from './job-look';
import { jobConditionEnd, type JobEnd } from './pod-failure';
import { PodWatch, type PodWatchOptions } from './pod-watch';

export interface KubernetesExecutorOptions {
  /** A client for K8S_EXECUTOR_NAMESPACE. */
  client: KubeClient;
  /** K8S_EXECUTOR_OWNER_ID: the `sluice.io/owner` label of every Job and Secret. */
  ownerId: string;
  /** SLUICE_RUNNER_IMAGE: the init container's image (inject_runner). */
  runnerImage: string;
  /** PIPELINE_RUNTIME_DEFAULT_*, else K8S_EXECUTOR_DEFAULT_CPU / _MEMORY. */
  defaultResources?: Resources;
  /** Between looks at a Job and its pods; default 2 s. The pod watch makes a look come sooner. */
  pollIntervalMs?: number;
  /**
   * The pod watch, a fast hint beside the poll: false turns it off; an object tunes it (its
   * backoff, where it starts). Default on.
   */
  podWatch?:
    boolean | Pick<PodWatchOptions, 'backoffMs' | 'maxBackoffMs' | 'timeoutSeconds' | 'resourceVersion'>;
  /** How long a pull error may last before the task run fails `image_pull`; default 30 s. */
  imagePullGraceMs?: number;
  /**
   * K8S_EXECUTOR_POD_PENDING_TIMEOUT: a pod unscheduled this long, or a Job without a pod this
   * long, fails the task run; default 10 min.
   */
  podPendingTimeoutMs?: number;
  /** The executor's own heartbeat, which covers a Pending pod before its runner is up; default 5 s. */
  heartbeatIntervalMs?: number;
  /** K8S_EXECUTOR_SERVER_ADDR: the pods' SLUICE_API_URL; default the context's runner API URL. */
  serverAddr?: string;
}

interface KubeTaskRun {
  taskRunId: string;
  fence: number;
  job: string;
  ctx: ExecutorContext;
  outcome: Promise<ExecutorOutcome> | null;
  heartbeat: NodeJS.Timeout;
  heartbeating: boolean;
  cancelled: boolean;
  /** Lost to a newer claim: nothing is left to report. */
  settled: boolean;
  abort: AbortController;
  /** The pod watch saw a change: look now (ends the poll's sleep, or skips the next one). */
  hinted: boolean;
  wake: (() => void) | null;
}

/**
 * Runs each attempt as a Kubernetes Job (docs/kubernetes-executor.md): a Secret with the run
 * token, the Job, then the Secret owned by the Job so the garbage collector removes both. The
 * runner in the pod does the task's work and reporting; this executor watches the Job and its
 * pods and tells the instance why the work ended when the runner could not (`image_pull`,
 * `pod_crash`, `lost`, a Job that cannot create its pod). Jobs survive the executor.
 */
export class KubernetesExecutor implements Executor {
  readonly type = 'kubernetes' as const;
  private readonly client: KubeClient;
  private readonly ownerId: string;
  private readonly runnerImage: string;
  private readonly defaultResources: Resources;
  private readonly pollIntervalMs: number;
  private readonly imagePullGraceMs: number;
  private readonly heartbeatIntervalMs: number;
  private readonly podPendingTimeoutMs: number;
  private readonly serverAddr: string | undefined;
  private readonly local = new Map<string, KubeTaskRun>();
  private readonly podWatchOptions: PodWatchOptions | null;
  /** Runs while this executor watches any Job (so an idle executor holds no connection). */
  private podWatch: PodWatch | null = null;
  private closed = false;

  constructor(options: KubernetesExecutorOptions) {
    if (!options.ownerId)
      throw new Error('KubernetesExecutorOptions.ownerId (K8S_EXECUTOR_OWNER_ID) is required');
    this.client = options.client;
    this.ownerId = options.ownerId;
    this.runnerImage = options.runnerImage;
    this.defaultResources = options.defaultResources ?? {};
    this.pollIntervalMs = options.pollIntervalMs ?? 2_000;
    this.imagePullGraceMs = options.imagePullGraceMs ?? 30_000;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 5_000;
    this.serverAddr = options.serverAddr;
    this.podPendingTimeoutMs = options.podPendingTimeoutMs ?? 10 * 60_000;
    this.podWatchOptions =
      options.podWatch === false
        ? null
        : {
            ...(typeof options.podWatch === 'object' ? options.podWatch : {}),
            client: this.client,
            labelSelector: `${KUBE_LABELS.owner}=${this.ownerId}`,
            onChange: (pod) => this.hint(pod?.metadata?.labels?.[KUBE_LABELS.taskRun] ?? null),
            onTrouble: (message, fields) => this.local.values().next().value?.ctx.log.warn(message, fields),
          };
  }

  async start(run: ClaimedTaskRun, ctx: ExecutorContext): Promise<TaskRunHandle> {
    if (this.closed)
      throw new Error(`kubernetes executor is shut down; task run ${run.taskRunId} not started`);
    if (this.local.has(run.taskRunId)) throw new Error(`task run ${run.taskRunId} already has a Job`);
    const job = jobManifest({
      run,
      ownerId: this.ownerId,
      runnerApiUrl: this.serverAddr ?? ctx.runnerApiUrl,
      runnerImage: this.runnerImage,
      defaultResources: this.defaultResources,
    });
    const name = job.metadata?.name ?? '';
    const secret = secretManifest(this.ownerId, run);
    const secretName = secret.metadata?.name ?? '';
    const entry = this.track(run.taskRunId, run.fence, name, ctx);
    try {
      await this.createSecret(secret);
      const created = await this.createJob(job, secretName);
      await this.client.ownSecretByJob(secretName, created);
    } catch (err) {
      this.untrack(entry);
      await this.client.deleteJob(name).catch(() => undefined);
      await this.client.deleteSecret(secretName).catch(() => undefined);
      if (err instanceof TaskRunStartError) throw err;
      throw new Error(
        `creating Job ${name} in namespace ${this.client.namespace} failed: ${kubeErrorMessage(err)}`,
      );
    }
    entry.outcome = this.watch(entry);
    ctx.log.debug('Job created', { taskRunId: run.taskRunId, job: name });
    return { taskRunId: run.taskRunId, fence: run.fence, externalRef: name };
  }

  async wait(handle: TaskRunHandle): Promise<ExecutorOutcome> {
    const entry = this.local.get(handle.taskRunId);
    if (!entry?.outcome) {
      throw new Error(`task run ${handle.taskRunId} has no Job here (externalRef ${handle.externalRef})`);
    }
    const outcome = await entry.outcome;
    this.untrack(entry);
    // After shutdown the Job is left running for the next executor with this owner ID.
    if (!this.closed) {
      await this.client
        .deleteJob(entry.job)
        .catch((err) =>
          entry.ctx.log.warn('deleting a Job failed', { job: entry.job, error: kubeErrorMessage(err) }),
        );
    }
    return outcome;
  }

  /** Deletes the Job (foreground: its pod and Secret go with it); `wait` sees it gone. */
  async cancel(handle: TaskRunHandle): Promise<void> {
    const entry = this.local.get(handle.taskRunId);
    if (entry) entry.cancelled = true;
    const name = entry?.job ?? handle.externalRef;
    if (!name) return;
    // void: cancel returns once asked; a failed delete is logged, and the owner's cleanup finds the Job again.
    void this.client.deleteJob(name).catch((err) =>
      entry?.ctx.log.warn('deleting a Job for a cancel failed', {
        job: name,
        error: kubeErrorMessage(err),
      }),
    );
  }

  async status(handle: TaskRunHandle): Promise<ExecutorStatus> {
    if (!handle.externalRef) return 'unknown';
    try {
      const job = await this.client.readJob(handle.externalRef);
      if (!job || job.metadata?.deletionTimestamp || jobConditionEnd(job)) return 'exited';
      return 'running';
    } catch {
      return 'unknown';
    }
  }

  /** The Jobs keep running (their runners report to any server); only our watching ends. */
  async shutdown(): Promise<void> {
    this.closed = true;
    this.stopPodWatch();
    for (const entry of this.local.values()) {
      clearInterval(entry.heartbeat);
      entry.abort.abort();
    }
  }

  /** Task runs whose Job this executor watches now (cleanup must not touch them). */
  tracked(): string[] {
    return [...this.local.keys()];
  }

  /**
   * Takes over a Job of this owner whose task run the server still runs (after a restart of the
   * executor): heartbeats and watches it as if this executor had created it. Null when it is
   * already watched here or its labels name no task run.
   */
  adopt(job: V1Job, ctx: ExecutorContext): { run: ClaimedTaskRun; handle: TaskRunHandle } | null {
    if (this.closed) return null;
    const run = taskRunOfJob(job);
    const name = job.metadata?.name;
    if (!run || !name || this.local.has(run.taskRunId)) return null;
    const entry = this.track(run.taskRunId, run.fence, name, ctx);
    entry.outcome = this.watch(entry);
    return { run, handle: { taskRunId: run.taskRunId, fence: run.fence, externalRef: name } };
  }

  /** Stops watching a task run's Job without touching it (an adoption nobody took). */
  release(taskRunId: string): void {
    const entry = this.local.get(taskRunId);
    if (entry) this.untrack(entry);
  }

  private async createSecret(secret: ReturnType<typeof secretManifest>): Promise<void> {
    try {
      await this.client.createSecret(secret);
    } catch (err) {
      if (!isKubeStatus(err, 409)) throw err;
      // A leftover of this attempt (an executor that died mid-start) holds an older token: replace it.
      await this.client.deleteSecret(secret.metadata?.name ?? '');
      await this.client.createSecret(secret);
    }
  }

  private async createJob(job: V1Job, secretName: string): Promise<V1Job> {
    try {
      return await this.client.createJob(job);
    } catch (err) {
      if (isKubeStatus(err, 422) || isKubeStatus(err, 400)) {
        throw new TaskRunStartError(
          'error',
          `the API server refused Job ${job.metadata?.name}: ${kubeErrorMessage(err)}`,
        );
      }
      if (isKubeStatus(err, 409)) {
        throw new Error(
          `Job ${job.metadata?.name} (secret ${secretName}) already exists: this attempt runs elsewhere`,
        );
      }
      throw err;
    }
  }

  private track(taskRunId: string, fence: number, job: string, ctx: ExecutorContext): KubeTaskRun {
    const entry: KubeTaskRun = {
      taskRunId,
      fence,
      job,
      ctx,
      outcome: null,
      heartbeat: setInterval(() => void this.heartbeat(entry), this.heartbeatIntervalMs),
      heartbeating: false,
      cancelled: false,
      settled: false,
      abort: new AbortController(),
      hinted: false,
      wake: null,
    };
    this.local.set(taskRunId, entry);
    if (!this.podWatch && this.podWatchOptions && !this.closed) {
      this.podWatch = new PodWatch(this.podWatchOptions);
      this.podWatch.start();
    }
    return entry;
  }

  private untrack(entry: KubeTaskRun): void {
    clearInterval(entry.heartbeat);
    entry.abort.abort();
    if (this.local.get(entry.taskRunId) === entry) this.local.delete(entry.taskRunId);
    if (this.local.size === 0) this.stopPodWatch();
  }

  private stopPodWatch(): void {
    this.podWatch?.stop();
    this.podWatch = null;
  }

  /** The pod watch saw a pod of this task run change (null: any may have): look at its Job now. */
  private hint(taskRunId: string | null): void {
    const entries = taskRunId === null ? [...this.local.values()] : [this.local.get(taskRunId)];
    for (const entry of entries) {
      if (!entry) continue;
      entry.hinted = true;
      entry.wake?.();
    }
  }

  /** The poll's wait: the interval, cut short by a hint of the pod watch or by the end of watching. */
  private pause(entry: KubeTaskRun): Promise<void> {
    if (entry.hinted || entry.abort.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const signal = entry.abort.signal;
      const timer = setTimeout(done, this.pollIntervalMs);
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        entry.wake = null;
        resolve();
      }
      entry.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Looks at the Job and its pods until one of them tells an end: a full read each time, every
   * poll interval and at once when the pod watch hints at a change (a lost watch costs only time).
   */
  private async watch(entry: KubeTaskRun): Promise<ExecutorOutcome> {
    const seen: JobLookState = { pullSince: new Map(), pods: new Set() };
    for (;;) {
      if (entry.abort.signal.aborted) return { exitCode: null, signal: null, completed: true };
      let end: JobEnd | null = null;
      entry.hinted = false;
      try {
        end = await lookAtJob(this.client, entry.job, seen, {
          imagePullGraceMs: this.imagePullGraceMs,
          podPendingTimeoutMs: this.podPendingTimeoutMs,
        });
      } catch (err) {
        // The API server is away: the runner still reports; look again.
        entry.ctx.log.warn('reading a Job failed', { job: entry.job, error: kubeErrorMessage(err) });
      }
      if (end) return this.outcomeOf(entry, end);
      await this.pause(entry);
    }
  }

  private outcomeOf(entry: KubeTaskRun, end: JobEnd): ExecutorOutcome {
    if (entry.settled) return { exitCode: end.exitCode, signal: null, completed: true };
    if (end.kind === 'succeeded') return { exitCode: 0, signal: null };
    if (entry.cancelled) {
      return {
        exitCode: end.exitCode,
        signal: null,
        cancelled: true,
        error: `cancelled: Job ${entry.job} was deleted before its runner reported a result`,
      };
    }
    return {
      exitCode: end.exitCode,
      signal: null,
      reason: end.reason ?? 'error',
      error: end.error ?? `Job ${entry.job} ended without its runner reporting a result`,
    };
  }

  /** docs/decisions.md §6: the executor's own heartbeat covers a Pending pod; a cancel or a newer claim deletes the Job. */
  private async heartbeat(entry: KubeTaskRun): Promise<void> {
    if (entry.heartbeating) return;
    entry.heartbeating = true;
    try {
      const answer = await entry.ctx.protocol.heartbeat({ taskRunId: entry.taskRunId, fence: entry.fence });
      if (answer.cancel && !entry.cancelled) {
        entry.cancelled = true;
        await this.client.deleteJob(entry.job);
      }
    } catch (err) {
      if (isStaleFenceError(err)) {
        entry.ctx.log.info('task run is owned by a newer claim; deleting its Job', {
          taskRunId: entry.taskRunId,
        });
        entry.settled = true;
        clearInterval(entry.heartbeat);
        await this.client.deleteJob(entry.job).catch(() => undefined);
        return;
      }
      entry.ctx.log.warn('kubernetes heartbeat failed', {
        taskRunId: entry.taskRunId,
        error: errorMessage(err),
      });
    } finally {
      entry.heartbeating = false;
    }
  }
}
