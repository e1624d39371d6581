/** The signals that stop a Sluice process. */
export type ShutdownSignal = 'SIGTERM' | 'SIGINT';

/** Where SIGTERM/SIGINT arrive: `process`, or an emitter of a test's. */
export interface SignalSource {
  on(event: ShutdownSignal, listener: (signal: NodeJS.Signals) => void): unknown;
  off(event: ShutdownSignal, listener: (signal: NodeJS.Signals) => void): unknown;
}

/** What was started: stop() runs its stop stack. */
export interface Stoppable {
  stop(): Promise<void>;
}

export interface RunUntilSignalOptions {
  /** Default: process. */
  signals?: SignalSource;
  /** A stop slower than this is given up on: exit code 1. */
  stopTimeoutMs: number;
  /** Each step, for the app to say in its own words (log or stderr). */
  onStopping?(signal: NodeJS.Signals): void;
  onStopped?(): void;
  onStopFailed?(error: unknown): void;
  onStopTimeout?(timeoutMs: number): void;
  onSecondSignal?(signal: NodeJS.Signals): void;
}

/** Exit codes: a clean stop, a failed or timed-out stop, a second signal (128 + SIGINT). */
export const EXIT_STOPPED = 0;
export const EXIT_STOP_FAILED = 1;
export const EXIT_SECOND_SIGNAL = 130;

/**
 * The process lifecycle of every Sluice app: starts, then waits for SIGTERM or
 * SIGINT and stops through `stop()` (each app's stop stack, last started
 * first stopped). A second signal, or a stop slower than `stopTimeoutMs`,
 * gives up on the stop. Resolves with the exit code and never exits itself:
 * the app's entry point calls process.exit, so tests run it with a fake
 * signal source. Signals are listened to from the start, so one that arrives
 * while starting stops the process as soon as it is up. A failed start
 * rejects with its error.
 */
export async function runUntilSignal(
  start: () => Promise<Stoppable>,
  options: RunUntilSignalOptions,
): Promise<number> {
  const signals: SignalSource = options.signals ?? process;
  const received: Array<(signal: NodeJS.Signals) => void> = [];
  const first = new Promise<NodeJS.Signals>((resolve) => received.push(resolve));
  const second = new Promise<NodeJS.Signals>((resolve) => received.push(resolve));
  const onSignal = (signal: NodeJS.Signals): void => received.shift()?.(signal);
  signals.on('SIGTERM', onSignal);
  signals.on('SIGINT', onSignal);
  let force: NodeJS.Timeout | undefined;
  try {
    const running = await start();
    const signal = await first;
    options.onStopping?.(signal);
    return await Promise.race([
      running.stop().then(
        () => {
          options.onStopped?.();
          return EXIT_STOPPED;
        },
        (error: unknown) => {
          options.onStopFailed?.(error);
          return EXIT_STOP_FAILED;
        },
      ),
      second.then((again) => {
        options.onSecondSignal?.(again);
        return EXIT_SECOND_SIGNAL;
      }),
      new Promise<number>((resolve) => {
        force = setTimeout(() => {
          options.onStopTimeout?.(options.stopTimeoutMs);
          resolve(EXIT_STOP_FAILED);
        }, options.stopTimeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(force);
    signals.off('SIGTERM', onSignal);
    signals.off('SIGINT', onSignal);
  }
}
