import {
  ClaimRequest as ClaimRequestSchema,
  CompletionRequest as CompletionRequestSchema,
  ExecutorLogBatch as ExecutorLogBatchSchema,
  FencedTaskRunRef as FencedTaskRunRefSchema,
  InstanceRegistration as InstanceRegistrationSchema,
  MarkStartedRequest as MarkStartedRequestSchema,
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
  /** The instance whose claim holds it; null while queued. */
  ownerId: string | null;
  reason: TaskRunReason | null;
  exitCode: number | null;
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
 * runs it queued (it passes the executor contract suite, as both real
 * bindings do): requests are checked with the protocol's schemas; claims take
 * the oldest queued task runs of the requested types and pools up to the
 * limit and bump the fence; writes with an old fence, or to an ended task
 * run, throw StaleFenceError (log lines with the current fence are still
 * taken after the end, and a resent seq is kept once); a completion of an
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
  /** The stored log lines per task run, by seq: the first copy of a seq wins. */
  private readonly storedLines = new Map<string, Map<number, ExecutorLogBatch['lines'][number]>>();
  private readonly waiters = new Set<(queued: boolean) => void>();
  private readonly events: string[];
  private readonly acceptUnknown: boolean;

  constructor(options: InMemoryProtocolOptions = {}) {
    this.events = options.events ?? [];
    this.acceptUnknown = options.unknownTaskRuns === 'accept';
  }

  /** Queues a task run of `type` in `pool` and returns its id; waiting waitForWork calls answer true. */
  enqueue(type: ExecutorType, pool = 'default', ids: { executionId?: string; taskId?: string } = {}): string {
    this.next += 1;
    const taskRunId = `tr-${this.next}`;
    this.taskRuns.set(taskRunId, {
      run: {
        taskRunId,
        executionId: ids.executionId ?? 'ex-1',
        taskId: ids.taskId ?? `task-${this.next}`,
        attempt: 1,
        executor: { type, pool },
        timeoutMs: 60_000,
        task:
          type === 'inline' ? { type: 'http', request: { url: 'http://127.0.0.1/' } } : { type: 'command' },
        runToken: `token-${taskRunId}`,
      },
      state: 'QUEUED',
      fence: 0,
      ownerId: null,
      reason: null,
      exitCode: null,
      error: null,
      externalRef: null,
    });
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const resolve of waiters) resolve(true);
    return taskRunId;
  }

  /** Requests the cancel of every active task run of the execution, as a user's cancel does. */
  cancelExecution(executionId: string): void {
    for (const [id, stored] of this.taskRuns) {
      if (stored.run.executionId === executionId && ACTIVE.includes(stored.state)) this.cancels.add(id);
    }
  }

  /** What the runner's result post does: the task run ends with the runner's fence. */
  completeAsRunner(taskRunId: string, state: 'SUCCEEDED' | 'FAILED' | 'CANCELLED'): void {
    const stored = this.get(taskRunId);
    if (stored) stored.state = state;
  }

  stateOf(taskRunId: string): Pick<StoredTaskRun, 'state' | 'reason' | 'error' | 'externalRef'> {
    const { state, reason, error, externalRef } = this.stored(taskRunId);
    return { state, reason, error, externalRef };
  }

  /** The task run as the fake stores it; throws for one it never queued. */
  stored(taskRunId: string): StoredTaskRun {
    const stored = this.get(taskRunId);
    if (!stored) throw new Error(`unknown task run ${taskRunId}`);
    return stored;
  }

  /** The log lines kept for a task run, in seq order, each seq once (as the server stores them). */
  storedLogLines(taskRunId: string): Array<ExecutorLogBatch['lines'][number]> {
    const lines = [...(this.storedLines.get(taskRunId)?.values() ?? [])];
    return lines.sort((a, b) => a.seq - b.seq);
  }

  /** The log lines reported for one task run, in the order they arrived. */
  logLines(taskRunId: string): string[] {
    return this.logs.filter((b) => b.taskRunId === taskRunId).flatMap((b) => b.lines.map((l) => l.line));
  }

  async register(registration: InstanceRegistration): Promise<void> {
    this.registrations.push(InstanceRegistrationSchema.parse(registration));
  }

  async claim(input: ClaimRequest): Promise<ClaimedTaskRun[]> {
    const request = ClaimRequestSchema.parse(input);
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
      stored.ownerId = request.instanceId;
      claimed.push({ ...stored.run, fence: stored.fence });
    }
    return claimed;
  }

  async markStarted(input: MarkStartedRequest): Promise<void> {
    const request = MarkStartedRequestSchema.parse(input);
    const stored = this.checkWrite(request);
    if (stored) stored.externalRef = request.externalRef;
  }

  async heartbeat(input: FencedTaskRunRef): Promise<{ cancel: boolean }> {
    const ref = FencedTaskRunRefSchema.parse(input);
    this.heartbeats.push(ref);
    this.checkWrite(ref);
    return { cancel: this.cancelOnHeartbeat || this.cancels.has(ref.taskRunId) };
  }

  async reportLogs(input: ExecutorLogBatch): Promise<void> {
    const batch = ExecutorLogBatchSchema.parse(input);
    // The last lines of a task often arrive just after its completion: the fence decides, not the state.
    this.checkWrite(batch, { ended: true });
    this.logs.push(input);
    const kept =
      this.storedLines.get(batch.taskRunId) ?? new Map<number, ExecutorLogBatch['lines'][number]>();
    for (const line of batch.lines) if (!kept.has(line.seq)) kept.set(line.seq, line);
    this.storedLines.set(batch.taskRunId, kept);
  }

  async complete(input: CompletionRequest): Promise<CompletionResponse> {
    this.completions.push(input);
    const request = CompletionRequestSchema.parse(input);
    const stored = this.get(request.taskRunId);
    if (!stored) return { applied: true, state: request.state };
    if (request.fence !== stored.fence) throw new StaleFenceError(request.taskRunId, request.fence);
    this.events.push(`complete ${request.taskRunId} ${request.state} ${request.reason ?? ''}`.trim());
    if (ENDED.includes(stored.state)) return { applied: false, state: stored.state };
    stored.state = request.state;
    stored.reason = request.reason;
    stored.exitCode = request.exitCode;
    stored.error = request.error;
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

  /** True as soon as enqueue() queues a task run, false after `timeoutMs`. */
  async waitForWork(timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (queued: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(queued);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(done);
    });
  }

  /** The stored task run; undefined only for an unknown one when unknown task runs are accepted. */
  private get(taskRunId: string): StoredTaskRun | undefined {
    const stored = this.taskRuns.get(taskRunId);
    if (!stored && !this.acceptUnknown) throw new Error(`unknown task run ${taskRunId}`);
    return stored;
  }

  private checkWrite(ref: FencedTaskRunRef, allow: { ended?: boolean } = {}): StoredTaskRun | undefined {
    const stored = this.get(ref.taskRunId);
    const open =
      ACTIVE.includes(stored?.state ?? 'QUEUED') ||
      (allow.ended && ENDED.includes(stored?.state ?? 'QUEUED'));
    if (stored && (ref.fence !== stored.fence || !open)) {
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
