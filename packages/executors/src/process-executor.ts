import { encodeRunnerAssignment, RUNNER_STANDBY_FLAG, type ClaimedTaskRun } from '@sluice/protocol';
import type { Executor, ExecutorContext, ExecutorOutcome, ExecutorStatus, TaskRunHandle } from './executor';
import { runnerEnvironment } from './runner-environment';
import { RunnerProcess, type RunnerDiagnostics } from './runner-process';
import { settlesWithin } from './settle';
import { StandbyRunners } from './standby-runners';
import type { Logger } from './logger';
import { checkRunnerReachable, type RunnerUser } from './runner-user';

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
  /**
   * Runners kept started and waiting for the next claim (SLUICE_STANDBY_RUNNERS), started
   * as `<runnerCommand> --standby`; 0 starts every runner on its claim. Default 1.
   */
  standbyRunners?: number;
  /**
   * The slots of this executor's slot group. Local runners and standbys together never
   * exceed them; task runs of other executors sharing the group are not seen. Default: no bound.
   */
  slots?: number | null;
  /**
   * The user runners (and so tasks) run as, each in a fresh 0700 home it owns: a root
   * instance's SLUICE_PROCESS_TASK_USER (docs/decisions.md §13). Needs this process to be
   * root. Default null: runners run as this process's user.
   */
  taskUser?: RunnerUser | null;
  /** Delay before replacing a standby that died unassigned; doubles per such death in a row, up to 60 s. Default 1 s. */
  standbyRestartDelayMs?: number;
}

interface LocalRunner {
  taskRunId: string;
  proc: RunnerProcess;
  killTimer: NodeJS.Timeout | null;
  /** cancel() stopped it: its outcome says so (see ExecutorOutcome.cancelled). */
  cancelled: boolean;
}

const PID_REF = /^pid:(\d+)$/;
const MAX_STANDBY_RESTART_DELAY_MS = 60_000;

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
 *
 * Most of a runner's start is loading its code, so the executor keeps
 * standby runners (StandbyRunners) that have done so, and hands a claim to
 * one of them over its stdin; without a ready standby it starts a runner
 * with the three run variables, as it always did. Either way the runner does
 * the same from there on.
 */
export class ProcessExecutor implements Executor {
  readonly type = 'process' as const;
  private readonly runnerCommand: [string, ...string[]];
  private readonly env: NodeJS.ProcessEnv;
  private readonly killAfterMs: number;
  private readonly shutdownTimeoutMs: number;
  private readonly local = new Map<string, LocalRunner>();
  private readonly standbys: StandbyRunners | null;
  private readonly taskUser: RunnerUser | null;
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
    const standbyRunners = options.standbyRunners ?? 1;
    if (!Number.isInteger(standbyRunners) || standbyRunners < 0) {
      throw new Error(
        `ProcessExecutorOptions.standbyRunners must be a whole number ≥ 0, not ${standbyRunners}`,
      );
    }
    const slots = options.slots ?? null;
    this.taskUser = options.taskUser ?? null;
    if (this.taskUser) {
      if (process.getuid?.() !== 0)
        throw new Error(`running tasks as ${this.taskUser.name} needs this process to be root`);
      checkRunnerReachable(this.runnerCommand, this.taskUser);
    }
    this.standbys =
      standbyRunners === 0
        ? null
        : new StandbyRunners({
            argv: [command, ...args, RUNNER_STANDBY_FLAG],
            serverEnv: this.env,
            wanted: () => Math.min(standbyRunners, slots === null ? Infinity : slots - this.liveRunners()),
            restartDelayMs: options.standbyRestartDelayMs ?? 1_000,
            maxRestartDelayMs: MAX_STANDBY_RESTART_DELAY_MS,
            user: this.taskUser,
          });
  }

  /** Starts the standby runners before the first claim (without it, that claim starts them). */
  prepare(log: Logger): void {
    log.info(
      this.taskUser
        ? `process tasks run as ${this.taskUser.name} (SLUICE_PROCESS_TASK_USER), each in a home of its own`
        : "process tasks run as this process's user: they can read what it can (docs/process-executor.md)",
      this.taskUser
        ? { uid: this.taskUser.uid, gid: this.taskUser.gid }
        : { uid: process.getuid?.() ?? null },
    );
    if (!this.closed) this.standbys?.fill(log);
  }

  /** Hands the task run to a standby runner when one is ready, else starts a runner for it. */
  async start(run: ClaimedTaskRun, ctx: ExecutorContext): Promise<TaskRunHandle> {
    if (this.closed) throw new Error(`process executor is shut down; task run ${run.taskRunId} not started`);
    if (this.local.has(run.taskRunId))
      throw new Error(`task run ${run.taskRunId} already has a local runner`);
    const diagnostics = { log: ctx.log, fields: { taskRunId: run.taskRunId } };
    const proc = this.handToStandby(run, ctx, diagnostics) ?? (await this.startRunner(run, ctx, diagnostics));
    const pid = proc.pid;
    if (pid === undefined) throw new Error(`runner for task run ${run.taskRunId} has no pid after spawn`);
    this.track(run.taskRunId, proc, ctx);
    // Replaces the standby just taken (or starts the first ones) for the next claim.
    if (!this.closed) this.standbys?.fill(ctx.log);
    return { taskRunId: run.taskRunId, fence: run.fence, externalRef: `pid:${pid}` };
  }

  async wait(handle: TaskRunHandle): Promise<ExecutorOutcome> {
    const runner = this.local.get(handle.taskRunId);
    if (!runner)
      throw new Error(`task run ${handle.taskRunId} has no local runner (externalRef ${handle.externalRef})`);
    const outcome = await runner.proc.exited;
    this.local.delete(handle.taskRunId);
    // A runner stopped before its TERM handler was in place reports nothing;
    // the instance then ends the task run CANCELLED rather than FAILED.
    if (runner.cancelled) return { ...outcome, cancelled: true };
    // Killed with SIGKILL by someone else (kill -9, the OOM killer): the work is lost,
    // as docker reports a killed container; a retry picks it up (a sync from its committed state).
    // Not on shutdown, where this executor sent the signal itself.
    return outcome.signal === 'SIGKILL' && !this.closed ? { ...outcome, reason: 'lost' } : outcome;
  }

  /** SIGTERM to the runner, which stops the task with its own grace; SIGKILL to the runner's group after killAfterMs. */
  async cancel(handle: TaskRunHandle): Promise<void> {
    const runner = this.local.get(handle.taskRunId);
    if (!runner || runner.proc.hasExited) return;
    runner.cancelled = true;
    this.stop(runner);
  }

  async status(handle: TaskRunHandle): Promise<ExecutorStatus> {
    const runner = this.local.get(handle.taskRunId);
    if (runner) return runner.proc.hasExited ? 'exited' : 'running';
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

  /**
   * Kills the standbys and cancels every local runner, and waits (bounded) until all have
   * exited; starts nothing afterwards.
   */
  async shutdown(): Promise<void> {
    this.closed = true;
    const standbysGone = this.standbys?.close() ?? Promise.resolve();
    const live = [...this.local.values()].filter((r) => !r.proc.hasExited);
    live.forEach((runner) => this.stop(runner));
    const allExited = Promise.all(live.map((r) => r.proc.exited));
    if (!(await settlesWithin(allExited, this.shutdownTimeoutMs))) {
      const stubborn = live.filter((r) => !r.proc.hasExited);
      stubborn.forEach((r) => r.proc.killGroup());
      await settlesWithin(Promise.all(stubborn.map((r) => r.proc.exited)), 1_000);
    }
    await standbysGone;
  }

  /** The standby that now runs `run`, or null when none is ready. */
  private handToStandby(
    run: ClaimedTaskRun,
    ctx: ExecutorContext,
    diagnostics: RunnerDiagnostics,
  ): RunnerProcess | null {
    if (!this.standbys) return null;
    // Encoded (and so validated) before a standby is taken: a bad assignment costs no standby.
    const assignment = encodeRunnerAssignment({
      apiUrl: ctx.runnerApiUrl,
      runToken: run.runToken,
      taskRunId: run.taskRunId,
    });
    const standby = this.standbys.take();
    if (!standby) return null;
    standby.describeAs(diagnostics);
    standby.keepsInstanceAlive(true);
    // Over the standby's own stdin pipe, not its environment: the run token never shows in
    // /proc/<pid>/environ, nor in anything that dumps a process's environment.
    standby.write(assignment);
    ctx.log.debug('task run handed to a standby runner', { taskRunId: run.taskRunId, pid: standby.pid });
    return standby;
  }

  /** A runner started for `run` alone, with the three run variables. */
  private async startRunner(
    run: ClaimedTaskRun,
    ctx: ExecutorContext,
    diagnostics: RunnerDiagnostics,
  ): Promise<RunnerProcess> {
    const env = runnerEnvironment(this.env, run, ctx.runnerApiUrl);
    const proc = RunnerProcess.spawn(this.runnerCommand, env, diagnostics, this.taskUser);
    await proc.started;
    ctx.log.debug('runner started', { taskRunId: run.taskRunId, pid: proc.pid });
    return proc;
  }

  private track(taskRunId: string, proc: RunnerProcess, ctx: ExecutorContext): void {
    const runner: LocalRunner = { taskRunId, proc, killTimer: null, cancelled: false };
    this.local.set(taskRunId, runner);
    // void: exited never rejects; this only logs and refills the standbys.
    void proc.exited.then((o) => {
      if (runner.killTimer) clearTimeout(runner.killTimer);
      ctx.log.debug('runner exited', { taskRunId, pid: proc.pid, exitCode: o.exitCode, signal: o.signal });
      // A slot came free: a standby may take it.
      if (!this.closed) this.standbys?.fill(ctx.log);
    });
  }

  private stop(runner: LocalRunner): void {
    runner.proc.signal('SIGTERM');
    runner.killTimer ??= setTimeout(() => runner.proc.killGroup(), this.killAfterMs);
  }

  /** Local runners that have not exited: they hold slots. */
  private liveRunners(): number {
    let live = 0;
    for (const runner of this.local.values()) if (!runner.proc.hasExited) live += 1;
    return live;
  }
}
