import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { ClaimedTaskRun } from '@sluice/protocol';
import type { Executor, ExecutorContext, ExecutorOutcome, ExecutorStatus, TaskRunHandle } from './executor';
import { errorMessage } from './errors';
import type { Logger } from './logger';
import { runnerEnvironment } from './runner-environment';
import { settlesWithin } from './settle';

export interface ProcessExecutorOptions {
  /** The runner command, e.g. `[process.execPath, '/abs/bin/sluice.cjs', 'exec']`; injected by the app. */
  runnerCommand: string[];
  /** The server's environment, filtered through RUNNER_ENV_ALLOWLIST. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * Time between SIGTERM to the runner and SIGKILL to its process group.
   * Default 15 s: the runner's own grace for the task (10 s) plus margin to post its result.
   */
  killAfterMs?: number;
  /** Upper bound of `shutdown()`. Default killAfterMs + 5 s. */
  shutdownTimeoutMs?: number;
}

interface LocalRunner {
  taskRunId: string;
  child: ChildProcess;
  pid: number;
  exited: boolean;
  outcome: Promise<ExecutorOutcome>;
  killTimer: NodeJS.Timeout | null;
}

const PID_REF = /^pid:(\d+)$/;

/** `pid:<pid>` back to a pid; null for anything else. */
export function parsePidRef(externalRef: string | null): number | null {
  const match = externalRef === null ? null : PID_REF.exec(externalRef);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/**
 * Runs each task run as a `sluice exec` child process of the instance, in its
 * own process group so that a cancel or a shutdown can stop the runner and
 * whatever it left in its group without touching the server. The runner
 * fetches the task, runs it (in a further group of its own) and reports
 * everything itself; this executor only starts, signals and reaps it.
 */
export class ProcessExecutor implements Executor {
  readonly type = 'process' as const;
  private readonly runnerCommand: [string, ...string[]];
  private readonly env: NodeJS.ProcessEnv;
  private readonly killAfterMs: number;
  private readonly shutdownTimeoutMs: number;
  private readonly local = new Map<string, LocalRunner>();
  private closed = false;

  constructor(options: ProcessExecutorOptions) {
    const [command, ...args] = options.runnerCommand;
    if (command === undefined || command === '') {
      throw new Error('ProcessExecutorOptions.runnerCommand must name the runner executable');
    }
    this.runnerCommand = [command, ...args];
    this.env = options.env ?? process.env;
    this.killAfterMs = options.killAfterMs ?? 15_000;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? this.killAfterMs + 5_000;
  }

  async start(run: ClaimedTaskRun, ctx: ExecutorContext): Promise<TaskRunHandle> {
    if (this.closed) throw new Error(`process executor is shut down; task run ${run.taskRunId} not started`);
    if (this.local.has(run.taskRunId))
      throw new Error(`task run ${run.taskRunId} already has a local runner`);
    const [command, ...args] = this.runnerCommand;
    const child = spawn(command, args, {
      detached: true,
      // stdin stays open and unwritten: the runner takes its end (EOF) as "my instance died",
      // even after a kill -9, and stops its task so the watchdog can fail it `lost`.
      stdio: ['pipe', 'pipe', 'pipe'],
      env: runnerEnvironment(this.env, run, ctx.runnerApiUrl),
    });
    const outcome = new Promise<ExecutorOutcome>((resolve) => {
      child.once('exit', (code, signal) => resolve({ exitCode: code, signal }));
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) =>
        reject(new Error(`could not start the runner ${command}: ${err.message}`)),
      );
    });
    // The runner may exit before we ever close its stdin: a broken pipe there is expected.
    child.stdin?.on('error', () => undefined);
    // After a successful spawn, 'error' only reports failed signals; log it rather than crash.
    child.on('error', (err) =>
      ctx.log.warn('runner process error', {
        taskRunId: run.taskRunId,
        error: err.message,
      }),
    );
    const pid = child.pid;
    if (pid === undefined) throw new Error(`runner for task run ${run.taskRunId} has no pid after spawn`);

    const runner: LocalRunner = {
      taskRunId: run.taskRunId,
      child,
      pid,
      exited: false,
      outcome,
      killTimer: null,
    };
    this.local.set(run.taskRunId, runner);
    void outcome.then((o) => {
      runner.exited = true;
      if (runner.killTimer) clearTimeout(runner.killTimer);
      ctx.log.debug('runner exited', {
        taskRunId: run.taskRunId,
        pid,
        exitCode: o.exitCode,
        signal: o.signal,
      });
    });
    // The runner's own stdout/stderr are its diagnostics; task logs travel through the runner API.
    forwardLines(child.stdout, ctx.log, run.taskRunId, 'stdout');
    forwardLines(child.stderr, ctx.log, run.taskRunId, 'stderr');
    ctx.log.debug('runner started', { taskRunId: run.taskRunId, pid });
    return {
      taskRunId: run.taskRunId,
      fence: run.fence,
      externalRef: `pid:${pid}`,
    };
  }

  async wait(handle: TaskRunHandle): Promise<ExecutorOutcome> {
    const runner = this.local.get(handle.taskRunId);
    if (!runner)
      throw new Error(`task run ${handle.taskRunId} has no local runner (externalRef ${handle.externalRef})`);
    const outcome = await runner.outcome;
    this.local.delete(handle.taskRunId);
    return outcome;
  }

  /** SIGTERM to the runner, which stops the task with its own grace; SIGKILL to the runner's group after killAfterMs. */
  async cancel(handle: TaskRunHandle): Promise<void> {
    const runner = this.local.get(handle.taskRunId);
    if (!runner || runner.exited) return;
    signal(runner.pid, 'SIGTERM');
    runner.killTimer ??= setTimeout(() => killGroup(runner), this.killAfterMs);
  }

  async status(handle: TaskRunHandle): Promise<ExecutorStatus> {
    const runner = this.local.get(handle.taskRunId);
    if (runner) return runner.exited ? 'exited' : 'running';
    // Not started by this process: a live pid may belong to anything by now, so only "gone" is certain.
    const pid = parsePidRef(handle.externalRef);
    if (pid === null) return 'unknown';
    try {
      process.kill(pid, 0);
      return 'unknown';
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ESRCH' ? 'exited' : 'unknown';
    }
  }

  /** Cancels every local runner and waits (bounded) until all have exited; starts nothing afterwards. */
  async shutdown(): Promise<void> {
    this.closed = true;
    const live = [...this.local.values()].filter((r) => !r.exited);
    for (const runner of live) {
      signal(runner.pid, 'SIGTERM');
      runner.killTimer ??= setTimeout(() => killGroup(runner), this.killAfterMs);
    }
    const allExited = Promise.all(live.map((r) => r.outcome));
    if (await settlesWithin(allExited, this.shutdownTimeoutMs)) return;
    const stubborn = live.filter((r) => !r.exited);
    stubborn.forEach(killGroup);
    await settlesWithin(Promise.all(stubborn.map((r) => r.outcome)), 1_000);
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

function killGroup(runner: LocalRunner): void {
  if (runner.exited) return;
  // The runner leads its own group (detached), so -pid reaches it and anything it left in the group.
  signal(-runner.pid, 'SIGKILL');
}

function forwardLines(
  stream: Readable | null,
  log: Logger,
  taskRunId: string,
  name: 'stdout' | 'stderr',
): void {
  if (!stream) return;
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  lines.on('line', (line) => log.info(line, { taskRunId, source: 'runner', stream: name }));
  lines.on('error', (err) =>
    log.warn('reading runner output failed', {
      taskRunId,
      error: errorMessage(err),
    }),
  );
}
