import type { ClaimedTaskRun, CompletionRequest, LogLine } from '@sluice/protocol';
import type { Executor, ExecutorContext, ExecutorOutcome, ExecutorStatus, TaskRunHandle } from './executor';
import {
  HTTP_BODY_OUTPUT_MAX_BYTES,
  describeUrl,
  parseHttpTask,
  readBodyCapped,
  responseOutputs,
  statusMatches,
  unexpectedStatusMessage,
} from './http-task';
import { errorMessage, isStaleFenceError } from './errors';
import { settlesWithin } from './settle';

export interface InlineExecutorOptions {
  /**
   * How often a running inline task run is heartbeated. Nobody else does it
   * (there is no runner), and the answer carries user cancels. Default 10 s.
   */
  heartbeatIntervalMs?: number;
  /** Upper bound of `shutdown()`. Default 5 s. */
  shutdownTimeoutMs?: number;
}

/** Why an inline task run was stopped before it finished on its own. */
type StopReason = 'cancel' | 'timeout' | 'shutdown' | 'stale';

interface InlineRun {
  run: ClaimedTaskRun;
  ctx: ExecutorContext;
  controller: AbortController;
  stopReason: StopReason | null;
  outcome: Promise<ExecutorOutcome> | null;
  done: boolean;
  nextSeq: number;
  pendingLines: LogLine[];
}

type Completion = Omit<CompletionRequest, 'taskRunId' | 'fence'>;

/** A subflow that waits for its child: the server parks the task run and the child's end completes it. */
const PARKED = 'parked' as const;

/**
 * Runs `http` and `subflow` tasks inside the instance. It reports
 * logs and the completion itself through the executor protocol, so `wait`
 * always answers `completed: true` unless that report failed.
 *
 * The request begins in `wait`, not in `start`: the instance records the
 * start (markStarted) in between, and a fast response must never complete the
 * task run before its start is recorded.
 */
export class InlineExecutor implements Executor {
  readonly type = 'inline' as const;
  private readonly heartbeatIntervalMs: number;
  private readonly shutdownTimeoutMs: number;
  private readonly runs = new Map<string, InlineRun>();
  private closed = false;

  constructor(options: InlineExecutorOptions = {}) {
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 10_000;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 5_000;
  }

  async start(run: ClaimedTaskRun, ctx: ExecutorContext): Promise<TaskRunHandle> {
    if (this.closed) throw new Error(`inline executor is shut down; task run ${run.taskRunId} not started`);
    if (this.runs.has(run.taskRunId)) throw new Error(`task run ${run.taskRunId} is already running inline`);
    const controller = new AbortController();
    this.runs.set(run.taskRunId, {
      run,
      ctx,
      controller,
      stopReason: null,
      outcome: null,
      done: false,
      nextSeq: 1,
      pendingLines: [],
    });
    return { taskRunId: run.taskRunId, fence: run.fence, externalRef: null };
  }

  async wait(handle: TaskRunHandle): Promise<ExecutorOutcome> {
    const r = this.runs.get(handle.taskRunId);
    if (!r) throw new Error(`task run ${handle.taskRunId} is not running inline here`);
    r.outcome ??= this.execute(r);
    try {
      return await r.outcome;
    } finally {
      this.runs.delete(handle.taskRunId);
    }
  }

  async cancel(handle: TaskRunHandle): Promise<void> {
    const r = this.runs.get(handle.taskRunId);
    if (r) stop(r, 'cancel');
  }

  async status(handle: TaskRunHandle): Promise<ExecutorStatus> {
    const r = this.runs.get(handle.taskRunId);
    if (!r) return 'unknown';
    return r.done ? 'exited' : 'running';
  }

  /** Aborts every inline task run (each completes FAILED instance_shutdown) and waits for them, bounded. */
  async shutdown(): Promise<void> {
    this.closed = true;
    const all = [...this.runs.values()];
    all.forEach((r) => stop(r, 'shutdown'));
    const outcomes = all.flatMap((r) => (r.outcome ? [r.outcome] : []));
    await settlesWithin(Promise.all(outcomes), this.shutdownTimeoutMs);
  }

  /** Never rejects: every failure becomes a completion or an outcome error. */
  private async execute(r: InlineRun): Promise<ExecutorOutcome> {
    const heartbeat = setInterval(() => void this.heartbeat(r), this.heartbeatIntervalMs);
    const timeout = setTimeout(() => stop(r, 'timeout'), r.run.timeoutMs);
    try {
      const completion = await this.perform(r);
      return await this.finish(r, completion);
    } catch (err) {
      return await this.finish(r, {
        state: 'FAILED',
        reason: 'error',
        error: errorMessage(err),
      });
    } finally {
      clearInterval(heartbeat);
      clearTimeout(timeout);
      r.done = true;
    }
  }

  /** Starts the child execution; a waiting subflow is then parked on the server, not held here. */
  private async startSubflow(r: InlineRun): Promise<Completion | typeof PARKED> {
    const task = r.run.task as { flow?: unknown; inputs?: unknown; wait?: unknown };
    if (typeof task.flow !== 'string')
      return { state: 'FAILED', reason: 'error', error: 'subflow task has no flow' };
    const wait = task.wait !== false;
    const { executionId } = await r.ctx.protocol.startSubflow({
      taskRunId: r.run.taskRunId,
      fence: r.run.fence,
      flow: task.flow,
      inputs: (task.inputs ?? {}) as Record<string, unknown>,
      wait,
    });
    this.logLine(
      r,
      `started subflow ${task.flow}: execution ${executionId}${wait ? ', waiting for it' : ''}`,
    );
    return wait ? PARKED : { state: 'SUCCEEDED', outputs: { executionId } };
  }

  private async perform(r: InlineRun): Promise<Completion | typeof PARKED> {
    if (r.stopReason) return stoppedCompletion(r);
    const type = r.run.task.type;
    if (type === 'subflow') return this.startSubflow(r);
    if (type !== 'http') {
      return {
        state: 'FAILED',
        reason: 'error',
        error: `the inline executor cannot run task type ${String(type)}`,
      };
    }
    const spec = parseHttpTask(r.run.task);
    this.logLine(r, `${spec.method} ${describeUrl(spec.url)}`);
    await this.flushLogs(r);
    const began = Date.now();
    try {
      const response = await fetch(spec.url, {
        method: spec.method,
        headers: spec.headers,
        body: spec.body,
        signal: r.controller.signal,
      });
      const body = await readBodyCapped(response, HTTP_BODY_OUTPUT_MAX_BYTES);
      const outputs = responseOutputs(response.status, body, response.headers.get('content-type'));
      this.logLine(r, `response ${response.status} in ${Date.now() - began} ms`);
      if (body.truncated)
        this.logLine(r, `response body cut at ${HTTP_BODY_OUTPUT_MAX_BYTES} bytes for the body output`);
      if (statusMatches(response.status, spec.expectedStatus)) return { state: 'SUCCEEDED', outputs };
      return {
        state: 'FAILED',
        reason: 'error',
        error: unexpectedStatusMessage(response.status, spec.expectedStatus),
        outputs,
      };
    } catch (err) {
      if (r.stopReason) return stoppedCompletion(r);
      return {
        state: 'FAILED',
        reason: 'error',
        error: `request failed: ${errorMessage(err)}`,
      };
    }
  }

  private async finish(r: InlineRun, completion: Completion | typeof PARKED): Promise<ExecutorOutcome> {
    const { taskRunId, fence } = r.run;
    // A newer claim owns the task run: whatever this attempt would report is stale.
    if (r.stopReason === 'stale') return { exitCode: null, signal: null, completed: true };
    if (completion === PARKED) {
      await this.flushLogs(r);
      return { exitCode: null, signal: null, completed: true };
    }
    if (completion.error) this.logLine(r, completion.error);
    await this.flushLogs(r);
    try {
      await r.ctx.protocol.complete({ taskRunId, fence, ...completion });
      return { exitCode: null, signal: null, completed: true };
    } catch (err) {
      if (isStaleFenceError(err)) return { exitCode: null, signal: null, completed: true };
      r.ctx.log.error('inline task run: reporting the completion failed', {
        taskRunId,
        error: errorMessage(err),
      });
      return {
        exitCode: null,
        signal: null,
        error: `could not report the result: ${errorMessage(err)}`,
      };
    }
  }

  private async heartbeat(r: InlineRun): Promise<void> {
    const { taskRunId, fence } = r.run;
    try {
      const answer = await r.ctx.protocol.heartbeat({ taskRunId, fence });
      if (answer.cancel) stop(r, 'cancel');
    } catch (err) {
      if (isStaleFenceError(err)) stop(r, 'stale');
      else
        r.ctx.log.warn('inline task run: heartbeat failed', {
          taskRunId,
          error: errorMessage(err),
        });
    }
  }

  private logLine(r: InlineRun, line: string): void {
    r.pendingLines.push({
      seq: r.nextSeq++,
      stream: 'system',
      line,
      ts: new Date().toISOString(),
    });
  }

  /** Logs are best effort: a failed upload is noted in the instance log and does not fail the task. */
  private async flushLogs(r: InlineRun): Promise<void> {
    const lines = r.pendingLines.splice(0);
    if (lines.length === 0) return;
    const { taskRunId, fence } = r.run;
    try {
      await r.ctx.protocol.reportLogs({ taskRunId, fence, lines });
    } catch (err) {
      r.ctx.log.warn('inline task run: log upload failed', {
        taskRunId,
        error: errorMessage(err),
      });
    }
  }
}

/** The first reason wins: a cancel that races a timeout stays a cancel. */
function stop(r: InlineRun, reason: StopReason): void {
  if (r.done) return;
  r.stopReason ??= reason;
  r.controller.abort();
}

function stoppedCompletion(r: InlineRun): Completion {
  switch (r.stopReason) {
    case 'cancel':
      return { state: 'CANCELLED', reason: 'cancelled' };
    case 'timeout':
      return {
        state: 'FAILED',
        reason: 'timeout',
        error: `request timed out after ${r.run.timeoutMs} ms`,
      };
    case 'shutdown':
      return {
        state: 'FAILED',
        reason: 'instance_shutdown',
        error: 'the instance shut down',
      };
    default:
      return { state: 'FAILED', reason: 'error', error: 'stopped' };
  }
}
