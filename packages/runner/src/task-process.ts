import { ChildProcess, spawn } from 'node:child_process';
import { Readable } from 'node:stream';

export type OutputStream = 'stdout' | 'stderr';

export interface TaskExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnTaskOptions {
  argv: readonly [string, ...string[]];
  cwd: string;
  env: Record<string, string>;
  onOutput: (stream: OutputStream, chunk: Buffer) => void;
  onOutputEnd: (stream: OutputStream) => void;
  /** Processes of the task were still running after it exited and were killed. */
  onLeftovers?: () => void;
}

/**
 * How long to wait for the task's pipes to close once its main process has exited and its
 * process group is gone. A process that left the group (setsid) can hold them open forever.
 */
const STDIO_DRAIN_MS = 2_000;

/**
 * The task's main process, started in its own process group (detached) so a
 * signal reaches everything it started. `exited` resolves once the main process
 * has exited and its output has been read to the end.
 */
export class TaskProcess {
  readonly exited: Promise<TaskExit>;
  private exitInfo: TaskExit | null = null;
  private stopping = false;
  private outputPaused = false;
  private killTimer: NodeJS.Timeout | null = null;
  private drainTimer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly child: ChildProcess & { stdout: Readable; stderr: Readable },
    readonly pid: number,
    options: SpawnTaskOptions,
  ) {
    for (const name of ['stdout', 'stderr'] as const) {
      child[name].on('data', (chunk: Buffer) => options.onOutput(name, chunk));
      child[name].on('end', () => options.onOutputEnd(name));
    }
    child.on('exit', (code, signal) => {
      this.exitInfo = { code, signal };
      // A finished task owns nothing any more: stop what it left running (not during a stop,
      // where the grace period applies to the whole group).
      if (!this.stopping && this.signalGroup('SIGKILL')) options.onLeftovers?.();
      this.armDrainTimer();
    });
    this.exited = new Promise((resolve) => {
      child.on('close', () => {
        this.clearTimers();
        resolve(this.exitInfo ?? { code: null, signal: null });
      });
    });
  }

  /** Starts the process; rejects with the spawn error (ENOENT, EACCES, …) when it cannot run. */
  static spawn(options: SpawnTaskOptions): Promise<TaskProcess> {
    const [file, ...args] = options.argv;
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        child.off('error', reject);
        // Later errors (a failed kill) must not crash the runner; signalGroup reports its own.
        child.on('error', () => {});
        resolve(
          new TaskProcess(
            child as ChildProcess & { stdout: Readable; stderr: Readable },
            child.pid!,
            options,
          ),
        );
      });
    });
  }

  /** Stops reading output; the task blocks on a full pipe. */
  pauseOutput(): void {
    this.outputPaused = true;
    this.child.stdout.pause();
    this.child.stderr.pause();
  }

  resumeOutput(): void {
    this.outputPaused = false;
    this.child.stdout.resume();
    this.child.stderr.resume();
  }

  /**
   * SIGTERM to the whole group now, SIGKILL to what is left of it after `graceMs`.
   * `onKill` is called when the SIGKILL is sent. A second call does nothing.
   */
  stop(graceMs: number, onKill: () => void): void {
    if (this.stopping) return;
    this.stopping = true;
    this.signalGroup('SIGTERM');
    this.killTimer = setTimeout(() => {
      this.killTimer = null;
      if (this.signalGroup('SIGKILL')) onKill();
      if (this.exitInfo) this.armDrainTimer();
    }, graceMs);
  }

  /** Signals every process of the task's group; false when none is left (ESRCH) or it cannot be signalled. */
  private signalGroup(signal: NodeJS.Signals): boolean {
    try {
      process.kill(-this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  private armDrainTimer(): void {
    if (this.killTimer || this.drainTimer) return;
    this.drainTimer = setTimeout(() => {
      this.drainTimer = null;
      // Output still waiting in a paused pipe is the task's, not a leftover's: read it first.
      if (this.outputPaused) return this.armDrainTimer();
      this.child.stdout.destroy();
      this.child.stderr.destroy();
    }, STDIO_DRAIN_MS);
  }

  private clearTimers(): void {
    if (this.killTimer) clearTimeout(this.killTimer);
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.killTimer = this.drainTimer = null;
  }
}
