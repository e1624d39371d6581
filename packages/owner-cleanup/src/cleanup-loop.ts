import { errorMessage, type Logger } from '@sluice/executors';
import { runCleanup, type CleanupOptions } from './cleanup';

export interface CleanupLoopOptions extends CleanupOptions {
  /** DOCKER_EXECUTOR_JOB_RESOURCE_CLEANUP_INTERVAL */
  intervalMs: number;
  log: Pick<Logger, 'info' | 'warn'>;
}

export interface CleanupLoop {
  /** The pass run at start; resolves (never rejects) when it is done. */
  first: Promise<void>;
  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void>;
}

/** Runs `runCleanup` now and every interval, one pass at a time; a failed pass is retried next time, logged once per run of failures. */
export function startCleanupLoop(options: CleanupLoopOptions): CleanupLoop {
  return startPassLoop(() => runCleanup(options), options.intervalMs, options.log, 'container cleanup');
}

/** Runs `pass` now and every `intervalMs`, one at a time; failures are logged once per run of them (`what` names it). */
export function startPassLoop(
  run: () => Promise<unknown>,
  intervalMs: number,
  log: Pick<Logger, 'info' | 'warn'>,
  what: string,
): CleanupLoop {
  let current: Promise<void> | null = null;
  let stopped = false;
  let failing = false;
  const pass = (): Promise<void> => {
    current ??= run()
      .then(
        () => {
          if (failing) log.info(`${what} works again`);
          failing = false;
        },
        (err: unknown) => {
          // One warning per outage (an engine that is down), not one per interval.
          if (!failing) log.warn(`${what} failed`, { error: errorMessage(err) });
          failing = true;
        },
      )
      .finally(() => {
        current = null;
      });
    return current;
  };
  const first = pass();
  const timer = setInterval(() => {
    // void: pass() logs a failed pass itself; stop() awaits the one in flight.
    if (!stopped) void pass();
  }, intervalMs);
  return {
    first,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}
