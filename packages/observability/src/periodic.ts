export interface PeriodicOptions {
  /** Shown in the log when a pass fails. */
  name: string;
  intervalMs: number;
  /** Delay before the first pass; defaults to intervalMs. */
  firstDelayMs?: number;
  log: { error(message: string, fields?: Record<string, unknown>): void };
  run(): Promise<unknown>;
}

/**
 * Runs `run` every interval, one pass at a time (the next one is timed from
 * the end of the previous, so a slow pass never overlaps itself). A failing
 * pass is logged and the loop goes on. The returned stop() waits for a pass in
 * flight, so nothing touches the pool after it resolves. The background jobs
 * and the engine's watchdog both run on it.
 */
export function startPeriodic(options: PeriodicOptions): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;

  const tick = (): void => {
    timer = undefined;
    inFlight = (async () => {
      try {
        await options.run();
      } catch (err) {
        options.log.error(`${options.name} pass failed`, {
          error: err instanceof Error ? err.message : String(err),
        });
      }
    })().finally(() => {
      inFlight = undefined;
      if (!stopped) timer = setTimeout(tick, options.intervalMs);
    });
  };
  timer = setTimeout(tick, options.firstDelayMs ?? options.intervalMs);

  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await inFlight;
  };
}
