import type { ClaimedTaskRun, ExecutorType } from '@sluice/protocol';
import type { Executor, ExecutorOutcome, ExecutorStatus, TaskRunHandle } from '@sluice/executors';

interface Work {
  resolve: (outcome: ExecutorOutcome) => void;
  promise: Promise<ExecutorOutcome>;
}

/** An executor whose work is a promise the test settles; it records what the instance asked of it. */
export class ControlledExecutor implements Executor {
  readonly work = new Map<string, Work>();
  readonly started: string[] = [];
  readonly cancelled: string[] = [];
  /** Called at the start of every start(); may throw to fail the start. */
  onStart: (run: ClaimedTaskRun) => void = () => undefined;

  constructor(
    readonly type: ExecutorType,
    private readonly events: string[] = [],
  ) {}

  async start(run: ClaimedTaskRun): Promise<TaskRunHandle> {
    this.onStart(run);
    let resolve!: (outcome: ExecutorOutcome) => void;
    const promise = new Promise<ExecutorOutcome>((r) => (resolve = r));
    this.work.set(run.taskRunId, { resolve, promise });
    this.started.push(run.taskRunId);
    return {
      taskRunId: run.taskRunId,
      fence: run.fence,
      externalRef: `${this.type}:${run.taskRunId}`,
    };
  }

  async wait(handle: TaskRunHandle): Promise<ExecutorOutcome> {
    const work = this.work.get(handle.taskRunId);
    if (!work) throw new Error(`no work for ${handle.taskRunId}`);
    const outcome = await work.promise;
    this.work.delete(handle.taskRunId);
    return outcome;
  }

  async cancel(handle: TaskRunHandle): Promise<void> {
    this.cancelled.push(handle.taskRunId);
    this.events.push(`cancel ${handle.taskRunId}`);
  }

  async status(handle: TaskRunHandle): Promise<ExecutorStatus> {
    return this.work.has(handle.taskRunId) ? 'running' : 'unknown';
  }

  /** The instance started: recorded, so tests can see it came before any claim. */
  prepare(): void {
    this.events.push(`prepare ${this.type}`);
  }

  async shutdown(): Promise<void> {
    this.events.push(`shutdown ${this.type}`);
    if (this.type === 'docker' || this.type === 'kubernetes') return; // their work outlives the instance
    for (const work of this.work.values()) work.resolve({ exitCode: null, signal: 'SIGTERM' });
  }

  /** The work ends the way a runner process would. */
  finish(taskRunId: string, outcome: ExecutorOutcome = { exitCode: 0, signal: null }): void {
    const work = this.work.get(taskRunId);
    if (!work) throw new Error(`no running work for ${taskRunId}`);
    work.resolve(outcome);
  }

  running(): number {
    return this.work.size;
  }
}
