import {
  StaleFenceError,
  type ClaimRequest,
  type ClaimedTaskRun,
  type CompletionRequest,
  type CompletionResponse,
  type ExecutorLogBatch,
  type ExecutorProtocol,
  type ExecutorType,
  type FencedTaskRunRef,
  type InstanceRegistration,
  type MarkStartedRequest,
  type TaskRunReason,
  type TaskRunState,
} from '@sluice/protocol';

export interface StoredTaskRun {
  run: Omit<ClaimedTaskRun, 'fence'>;
  state: TaskRunState;
  fence: number;
  reason: TaskRunReason | null;
  error: string | null;
  externalRef: string | null;
}

/**
 * A test double of the executor protocol that keeps the server's rules: claims
 * take the oldest queued task runs of the requested types and pools up to the
 * limit and bump the fence; writes with an old fence, or to an ended task run,
 * throw StaleFenceError; a completion of an ended task run answers applied=false.
 */
export class InMemoryProtocol implements ExecutorProtocol {
  readonly taskRuns = new Map<string, StoredTaskRun>();
  readonly registrations: InstanceRegistration[] = [];
  readonly claims: ClaimRequest[] = [];
  readonly completions: CompletionRequest[] = [];
  readonly cancels = new Set<string>();
  /** Runs inside every claim before it answers (to sample the instance's state). */
  onClaim: (request: ClaimRequest) => void = () => undefined;
  private next = 0;

  constructor(private readonly events: string[] = []) {}

  enqueue(type: ExecutorType, pool = 'default'): string {
    this.next += 1;
    const taskRunId = `tr-${this.next}`;
    this.taskRuns.set(taskRunId, {
      run: {
        taskRunId,
        executionId: 'ex-1',
        taskId: `task-${this.next}`,
        attempt: 1,
        executor: { type, pool },
        timeoutMs: 60_000,
        task:
          type === 'inline' ? { type: 'http', request: { url: 'http://127.0.0.1/' } } : { type: 'command' },
        runToken: `token-${taskRunId}`,
      },
      state: 'QUEUED',
      fence: 0,
      reason: null,
      error: null,
      externalRef: null,
    });
    return taskRunId;
  }

  /** What the runner's result post does: the task run ends with the runner's fence. */
  completeAsRunner(taskRunId: string, state: 'SUCCEEDED' | 'FAILED' | 'CANCELLED'): void {
    const stored = this.get(taskRunId);
    stored.state = state;
  }

  stateOf(taskRunId: string): Pick<StoredTaskRun, 'state' | 'reason' | 'error' | 'externalRef'> {
    const { state, reason, error, externalRef } = this.get(taskRunId);
    return { state, reason, error, externalRef };
  }

  async register(registration: InstanceRegistration): Promise<void> {
    this.registrations.push(registration);
  }

  async claim(request: ClaimRequest): Promise<ClaimedTaskRun[]> {
    this.claims.push(request);
    this.onClaim(request);
    const claimed: ClaimedTaskRun[] = [];
    for (const stored of this.taskRuns.values()) {
      if (claimed.length >= request.limit) break;
      const { type, pool } = stored.run.executor;
      if (stored.state !== 'QUEUED' || !request.executorTypes.includes(type)) continue;
      if (type !== 'inline' && !request.pools.includes(pool)) continue;
      stored.state = 'STARTING';
      stored.fence += 1;
      claimed.push({ ...stored.run, fence: stored.fence });
    }
    return claimed;
  }

  async markStarted(request: MarkStartedRequest): Promise<void> {
    this.checkWrite(request).externalRef = request.externalRef;
  }

  async heartbeat(ref: FencedTaskRunRef): Promise<{ cancel: boolean }> {
    this.checkWrite(ref);
    return { cancel: this.cancels.has(ref.taskRunId) };
  }

  async reportLogs(batch: ExecutorLogBatch): Promise<void> {
    this.checkWrite(batch);
  }

  async complete(request: CompletionRequest): Promise<CompletionResponse> {
    this.completions.push(request);
    const stored = this.get(request.taskRunId);
    if (request.fence !== stored.fence) throw new StaleFenceError(request.taskRunId, request.fence);
    this.events.push(`complete ${request.taskRunId} ${request.state} ${request.reason ?? ''}`.trim());
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(stored.state))
      return { applied: false, state: stored.state };
    stored.state = request.state;
    stored.reason = request.reason ?? null;
    stored.error = request.error ?? null;
    return { applied: true, state: stored.state };
  }

  async isStillRunning(taskRunId: string): Promise<boolean> {
    const state = this.taskRuns.get(taskRunId)?.state;
    return state === 'STARTING' || state === 'RUNNING';
  }

  async cancelRequested(taskRunIds: string[]): Promise<string[]> {
    return taskRunIds.filter((id) => this.cancels.has(id));
  }

  async startSubflow(request: { taskRunId: string }): Promise<{ executionId: string }> {
    return { executionId: `child-of-${request.taskRunId}` };
  }

  /** No relay here: answers "nothing new" shortly, so callers fall back to their poll. */
  async waitForWork(timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => setTimeout(() => resolve(false), Math.min(timeoutMs, 10)));
  }

  private get(taskRunId: string): StoredTaskRun {
    const stored = this.taskRuns.get(taskRunId);
    if (!stored) throw new Error(`unknown task run ${taskRunId}`);
    return stored;
  }

  private checkWrite(ref: FencedTaskRunRef): StoredTaskRun {
    const stored = this.get(ref.taskRunId);
    if (ref.fence !== stored.fence || !['STARTING', 'RUNNING'].includes(stored.state)) {
      throw new StaleFenceError(ref.taskRunId, ref.fence);
    }
    return stored;
  }
}
