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
  type StartSubflowRequest,
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

export interface InMemoryProtocolOptions {
  /** Where completions are noted as `complete <id> <state> <reason>`, beside a test's other events. */
  events?: string[];
  /**
   * What a write for a task run this fake never handed out does. `reject`
   * (default): throws, as for an id the server does not know. `accept`: it is
   * recorded and succeeds, for executor unit tests that hand claimed task runs
   * to an executor directly (see `claimedRun`).
   */
  unknownTaskRuns?: 'reject' | 'accept';
}

const ENDED: readonly TaskRunState[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
const ACTIVE: readonly TaskRunState[] = ['STARTING', 'RUNNING'];

/**
 * An in-memory ExecutorProtocol that keeps the server's rules for the task
 * runs it queued: claims take the oldest queued task runs of the requested
 * types and pools up to the limit and bump the fence; writes with an old
 * fence, or to an ended task run, throw StaleFenceError; a completion of an
 * ended task run answers applied=false. It records what it was sent, for
 * assertions on what an executor or instance reported.
 */
export class InMemoryExecutorProtocol implements ExecutorProtocol {
  readonly taskRuns = new Map<string, StoredTaskRun>();
  readonly registrations: InstanceRegistration[] = [];
  readonly claims: ClaimRequest[] = [];
  readonly completions: CompletionRequest[] = [];
  readonly heartbeats: FencedTaskRunRef[] = [];
  readonly logs: ExecutorLogBatch[] = [];
  readonly subflows: StartSubflowRequest[] = [];
  /** Task runs whose cancel was requested: heartbeats and cancelRequested say so. */
  readonly cancels = new Set<string>();
  /** Every heartbeat answers cancel (a cancel requested for whatever runs). */
  cancelOnHeartbeat = false;
  /** Runs inside every claim before it answers (to sample the instance's state). */
  onClaim: (request: ClaimRequest) => void = () => undefined;
  private next = 0;
  private readonly events: string[];
  private readonly acceptUnknown: boolean;

  constructor(options: InMemoryProtocolOptions = {}) {
    this.events = options.events ?? [];
    this.acceptUnknown = options.unknownTaskRuns === 'accept';
  }

  /** Queues a task run of `type` in `pool` and returns its id. */
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
    if (stored) stored.state = state;
  }

  stateOf(taskRunId: string): Pick<StoredTaskRun, 'state' | 'reason' | 'error' | 'externalRef'> {
    const stored = this.get(taskRunId);
    if (!stored) throw new Error(`unknown task run ${taskRunId}`);
    const { state, reason, error, externalRef } = stored;
    return { state, reason, error, externalRef };
  }

  /** The log lines reported for one task run, in the order they arrived. */
  logLines(taskRunId: string): string[] {
    return this.logs.filter((b) => b.taskRunId === taskRunId).flatMap((b) => b.lines.map((l) => l.line));
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
    const stored = this.checkWrite(request);
    if (stored) stored.externalRef = request.externalRef;
  }

  async heartbeat(ref: FencedTaskRunRef): Promise<{ cancel: boolean }> {
    this.heartbeats.push(ref);
    this.checkWrite(ref);
    return { cancel: this.cancelOnHeartbeat || this.cancels.has(ref.taskRunId) };
  }

  async reportLogs(batch: ExecutorLogBatch): Promise<void> {
    this.checkWrite(batch);
    this.logs.push(batch);
  }

  async complete(request: CompletionRequest): Promise<CompletionResponse> {
    this.completions.push(request);
    const stored = this.get(request.taskRunId);
    if (!stored) return { applied: true, state: request.state };
    if (request.fence !== stored.fence) throw new StaleFenceError(request.taskRunId, request.fence);
    this.events.push(`complete ${request.taskRunId} ${request.state} ${request.reason ?? ''}`.trim());
    if (ENDED.includes(stored.state)) return { applied: false, state: stored.state };
    stored.state = request.state;
    stored.reason = request.reason ?? null;
    stored.error = request.error ?? null;
    return { applied: true, state: stored.state };
  }

  async isStillRunning(taskRunId: string): Promise<boolean> {
    const state = this.taskRuns.get(taskRunId)?.state;
    return state !== undefined && ACTIVE.includes(state);
  }

  async cancelRequested(taskRunIds: string[]): Promise<string[]> {
    return taskRunIds.filter((id) => this.cancels.has(id));
  }

  async startSubflow(request: StartSubflowRequest): Promise<{ executionId: string }> {
    this.subflows.push(request);
    return { executionId: `child-of-${request.taskRunId}` };
  }

  /** No relay here: answers "nothing new" shortly, so callers fall back to their poll. */
  async waitForWork(timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => setTimeout(() => resolve(false), Math.min(timeoutMs, 10)));
  }

  /** The stored task run; undefined only for an unknown one when unknown task runs are accepted. */
  private get(taskRunId: string): StoredTaskRun | undefined {
    const stored = this.taskRuns.get(taskRunId);
    if (!stored && !this.acceptUnknown) throw new Error(`unknown task run ${taskRunId}`);
    return stored;
  }

  private checkWrite(ref: FencedTaskRunRef): StoredTaskRun | undefined {
    const stored = this.get(ref.taskRunId);
    if (stored && (ref.fence !== stored.fence || !ACTIVE.includes(stored.state))) {
      throw new StaleFenceError(ref.taskRunId, ref.fence);
    }
    return stored;
  }
}

let claimedRuns = 0;

/** A claimed task run as the server would hand it out, for executors tested without a protocol claim. */
export function claimedRun(overrides: Partial<ClaimedTaskRun> = {}): ClaimedTaskRun {
  claimedRuns += 1;
  return {
    taskRunId: `tr-${claimedRuns}`,
    executionId: 'ex-1',
    taskId: 'task',
    attempt: 1,
    fence: 1,
    executor: { type: 'process', pool: 'default' },
    timeoutMs: 60_000,
    task: { type: 'command', command: ['true'] },
    runToken: `run-token-${claimedRuns}`,
    ...overrides,
  };
}
