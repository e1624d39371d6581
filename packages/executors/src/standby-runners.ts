import type { Logger } from './logger';
import { RUNNER_ENV_ALLOWLIST } from './runner-environment';
import { RunnerProcess } from './runner-process';
import type { RunnerUser } from './runner-user';
import { settlesWithin } from './settle';

export interface StandbyRunnersOptions {
  /** The runner command with the standby flag, e.g. `[node, sluice.cjs, 'exec', '--standby']`. */
  argv: readonly [string, ...string[]];
  /** The server's environment; standbys get its allowlisted part only. */
  serverEnv: NodeJS.ProcessEnv;
  /** How many standbys to hold now: the configured number, within the slots left free. */
  wanted: () => number;
  /** Delay before replacing a standby that died unassigned; doubles per such death in a row. */
  restartDelayMs: number;
  maxRestartDelayMs: number;
  /** The user standbys run as (a root instance's SLUICE_PROCESS_TASK_USER); null = this process's. */
  user?: RunnerUser | null;
}

/**
 * The environment of a standby: the allowlisted server variables, exactly
 * what a freshly started runner gets, minus the three run variables. Its
 * task run arrives later over stdin, so the run token never enters an
 * environment (RunnerAssignment).
 */
export function standbyRunnerEnvironment(serverEnv: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of RUNNER_ENV_ALLOWLIST) {
    const value = serverEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * Runners started ahead of the claims they will run (`sluice exec
 * --standby`): each loads its code and waits for one line on stdin, its
 * assignment. Taking one skips the runner's start-up, which is most of a
 * process task run's pickup latency. A standby that dies unassigned is
 * replaced after a delay that doubles with each such death in a row, so a
 * broken runner cannot spin; until then claims start fresh runners.
 */
export class StandbyRunners {
  /** Started (or starting) and not yet handed a task run. */
  private readonly waiting = new Set<RunnerProcess>();
  /** Standbys this pool killed (trimmed or closed); kept until reaped. */
  private readonly retired = new Set<RunnerProcess>();
  private log: Logger | null = null;
  private deathsInARow = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: StandbyRunnersOptions) {}

  /** Starts or stops standbys until there are `wanted()`; starts none while a restart delay runs. */
  fill(log: Logger): void {
    this.log = log;
    if (this.closed) return;
    const wanted = Math.max(0, this.options.wanted());
    for (const standby of this.waiting) {
      if (this.waiting.size <= wanted) break;
      this.retire(standby);
    }
    if (this.restartTimer) return;
    while (this.waiting.size < wanted) this.startOne(log);
  }

  /** A running standby, now the caller's; null when none is ready (the caller starts a fresh runner). */
  take(): RunnerProcess | null {
    for (const standby of this.waiting) {
      if (!standby.running) continue;
      this.waiting.delete(standby);
      this.deathsInARow = 0;
      return standby;
    }
    return null;
  }

  /** Kills every standby (they hold no work) and resolves once they are reaped; starts none afterwards. */
  async close(timeoutMs = 5_000): Promise<void> {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    [...this.waiting].forEach((standby) => this.retire(standby));
    const reaped = Promise.all([...this.retired].map((standby) => standby.exited));
    await settlesWithin(reaped, timeoutMs);
  }

  private startOne(log: Logger): void {
    // Read at each start, as for a fresh runner: the same server variables at the same moment.
    const env = standbyRunnerEnvironment(this.options.serverEnv);
    let standby: RunnerProcess;
    try {
      standby = RunnerProcess.spawn(
        this.options.argv,
        env,
        { log, fields: { standbyRunner: true } },
        this.options.user,
      );
    } catch (err) {
      // Its home could not be made: as a standby that died at once, retried later.
      this.deathsInARow += 1;
      this.restartLater(log, { error: err instanceof Error ? err.message : String(err) });
      return;
    }
    this.waiting.add(standby);
    // A standby alone must not keep the instance running; an assigned runner does (see ProcessExecutor).
    standby.keepsInstanceAlive(false);
    standby.describeAs({ log, fields: { standbyRunner: standby.pid ?? null } });
    // void: both outcomes are handled; this only logs.
    void standby.started.then(
      () => log.debug('standby runner started', { pid: standby.pid }),
      () => undefined,
    );
    // void: exited never rejects; a standby that died early is replaced later.
    void standby.exited.then((outcome) => {
      this.retired.delete(standby);
      // Not waiting any more: handed a task run, retired, or the pool closed.
      if (!this.waiting.delete(standby) || this.closed) return;
      this.deathsInARow += 1;
      this.restartLater(log, {
        pid: standby.pid ?? null,
        exitCode: outcome.exitCode,
        signal: outcome.signal,
        ...(outcome.error ? { error: outcome.error } : {}),
      });
    });
  }

  /** Starts standbys again after a delay that doubles with each death in a row. */
  private restartLater(log: Logger, fields: Record<string, unknown>): void {
    const delay = Math.min(
      this.options.maxRestartDelayMs,
      this.options.restartDelayMs * 2 ** (this.deathsInARow - 1),
    );
    (this.log ?? log).warn('standby runner exited before it was given a task run; replacing it later', {
      ...fields,
      restartInMs: delay,
    });
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.fill(this.log ?? log);
    }, delay);
    this.restartTimer.unref();
  }

  private retire(standby: RunnerProcess): void {
    this.waiting.delete(standby);
    if (standby.hasExited) return;
    this.retired.add(standby);
    standby.killGroup();
  }
}
