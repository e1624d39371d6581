import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { ExecutorOutcome } from './executor';
import { errorMessage } from './errors';
import type { LogFields, Logger } from './logger';
import { createRunnerHome, removeRunnerHome, type RunnerUser } from './runner-user';

/** Where a runner's own stdout/stderr lines (its diagnostics) go, and what they are tagged with. */
export interface RunnerDiagnostics {
  log: Logger;
  fields: LogFields;
}

/**
 * One `sluice exec` child process of the instance: the leader of its own
 * process group (so a cancel or a shutdown reaches whatever it left in the
 * group, never the instance), with a stdin pipe that stays open for its whole
 * life. The runner takes that pipe's end (EOF) as "my instance died", even
 * after a kill -9, and stops its task so the watchdog can fail it `lost`.
 */
export class RunnerProcess {
  /** Undefined only when the spawn failed; `started` then rejects. */
  readonly pid: number | undefined;
  /** Resolves once the process runs; rejects, naming the command, when it could not be started. */
  readonly started: Promise<void>;
  /** Resolves when the process has exited (or could not be started). Never rejects. */
  readonly exited: Promise<ExecutorOutcome>;
  private spawned = false;
  private ended = false;
  private diagnostics: RunnerDiagnostics;

  private constructor(
    private readonly child: ChildProcess,
    command: string,
    diagnostics: RunnerDiagnostics,
  ) {
    this.pid = child.pid;
    this.diagnostics = diagnostics;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.ended = true;
        resolve({ exitCode: code, signal });
      });
      // A failed spawn emits 'error' and no 'exit'.
      child.once('error', (err) => {
        if (this.spawned) return;
        this.ended = true;
        resolve({ exitCode: null, signal: null, error: err.message });
      });
    });
    this.started = new Promise((resolve, reject) => {
      child.once('spawn', () => {
        this.spawned = true;
        resolve();
      });
      child.once('error', (err) => {
        if (!this.spawned) reject(new Error(`could not start the runner ${command}: ${err.message}`));
      });
    });
    // Nobody may await `started` (a standby that failed is just replaced): never an unhandled rejection.
    this.started.catch(() => undefined);
    // The runner may exit before we ever write to or close its stdin: a broken pipe there is expected.
    child.stdin?.on('error', () => undefined);
    // After a successful spawn, 'error' only reports failed signals; log it rather than crash.
    child.on('error', (err) => {
      if (this.spawned)
        this.diagnostics.log.warn('runner process error', { ...this.diagnostics.fields, error: err.message });
    });
    // The runner's own stdout/stderr are its diagnostics; task logs travel through the runner API.
    this.forwardLines(child.stdout, 'stdout');
    this.forwardLines(child.stderr, 'stderr');
  }

  /**
   * Starts `argv` with exactly `env`. Check `started` before relying on the process. With a
   * `user`, it runs as that user in a fresh home of its own (HOME, TMPDIR and cwd), removed
   * when it exits; throws when that home cannot be made.
   */
  static spawn(
    argv: readonly [string, ...string[]],
    env: Record<string, string>,
    diagnostics: RunnerDiagnostics,
    user: RunnerUser | null = null,
  ) {
    const [command, ...args] = argv;
    const stdio: ['pipe', 'pipe', 'pipe'] = ['pipe', 'pipe', 'pipe'];
    if (!user)
      return new RunnerProcess(spawn(command, args, { detached: true, stdio, env }), command, diagnostics);
    const home = createRunnerHome(user);
    const child = spawn(command, args, {
      detached: true,
      stdio,
      env: { ...env, HOME: home, TMPDIR: home },
      cwd: home,
      // Node (libuv) also drops the supplementary groups when it changes the uid.
      uid: user.uid,
      gid: user.gid,
    });
    const proc = new RunnerProcess(child, command, diagnostics);
    // void: exited never rejects, and a home that cannot be removed is only logged.
    void proc.exited.then(() => {
      try {
        removeRunnerHome(home);
      } catch (err) {
        proc.diagnostics.log.warn('could not remove the runner home', { home, error: errorMessage(err) });
      }
    });
    return proc;
  }

  /**
   * Started and not exited. A pid means the exec succeeded (Node's spawn only returns once
   * it did or failed); the 'spawn' event that `started` waits for merely comes a tick later.
   */
  get running(): boolean {
    return this.pid !== undefined && !this.ended;
  }

  get hasExited(): boolean {
    return this.ended;
  }

  /** Tags the runner's diagnostics from now on (a standby becomes the runner of a task run). */
  describeAs(diagnostics: RunnerDiagnostics): void {
    this.diagnostics = diagnostics;
  }

  /**
   * Whether this process alone may keep the instance's event loop alive. A
   * standby may not: an instance that ends without stopping its executor
   * closes the standby's stdin by ending, and the standby then exits.
   */
  keepsInstanceAlive(yes: boolean): void {
    const streams = [this.child.stdin, this.child.stdout, this.child.stderr] as Array<{
      ref?: () => void;
      unref?: () => void;
    } | null>;
    if (yes) {
      this.child.ref();
      streams.forEach((s) => s?.ref?.());
    } else {
      this.child.unref();
      streams.forEach((s) => s?.unref?.());
    }
  }

  /** Writes to stdin without closing it: its EOF must keep meaning "the instance died". */
  write(text: string): void {
    this.child.stdin?.write(text);
  }

  signal(sig: NodeJS.Signals): void {
    if (this.pid !== undefined && !this.ended) signalPid(this.pid, sig);
  }

  /** SIGKILL to the runner's whole group: it leads its group (detached), so -pid reaches what it left there. */
  killGroup(): void {
    if (this.pid !== undefined && !this.ended) signalPid(-this.pid, 'SIGKILL');
  }

  private forwardLines(stream: Readable | null, name: 'stdout' | 'stderr'): void {
    if (!stream) return;
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    lines.on('line', (line) =>
      this.diagnostics.log.info(line, { ...this.diagnostics.fields, source: 'runner', stream: name }),
    );
    lines.on('error', (err) =>
      this.diagnostics.log.warn('reading runner output failed', {
        ...this.diagnostics.fields,
        error: errorMessage(err),
      }),
    );
  }
}

function signalPid(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}
