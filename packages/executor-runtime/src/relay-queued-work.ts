import type { Logger } from '@sluice/executors';
import { errorMessage } from '@sluice/executors';
import type { ExecutorProtocol } from '@sluice/protocol';

/** How long one wait-for-work long poll may hang at the server. */
export const WAIT_FOR_WORK_MS = 25_000;

export interface RelayQueuedWorkOptions {
  protocol: Pick<ExecutorProtocol, 'waitForWork'>;
  /** Called each time the server says task runs were queued. */
  wake(): void;
  log: Pick<Logger, 'warn' | 'info'>;
  /** Long-poll length; default WAIT_FOR_WORK_MS. */
  waitMs?: number;
  /** Pause after a failed long poll, doubling up to 30 s; default 1 s. */
  retryMs?: number;
}

/**
 * Relays "task runs were queued" from the protocol's waitForWork to the
 * instance (`wake`), so pickup does not wait for the next poll. Over HTTP it
 * is the server's relay of PostgreSQL NOTIFY, which an executor without a
 * database cannot LISTEN to; in a standalone server the direct protocol
 * answers from the engine's queued-work signal. While the server is unreachable the loop
 * backs off; polling keeps the instance working meanwhile. The returned
 * function stops the loop; a long poll in flight is left to end on its own.
 */
export function relayQueuedWork(options: RelayQueuedWorkOptions): () => void {
  const waitMs = options.waitMs ?? WAIT_FOR_WORK_MS;
  const baseRetryMs = options.retryMs ?? 1_000;
  let stopped = false;
  let pause: { timer: NodeJS.Timeout; resolve(): void } | null = null;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      pause = { timer: setTimeout(resolve, ms), resolve };
    });

  // void: the loop runs until stopped; every failure inside it is caught and logged.
  void (async () => {
    let retryMs = baseRetryMs;
    let failing = false;
    while (!stopped) {
      try {
        const asked = Date.now();
        const queued = await options.protocol.waitForWork(waitMs);
        if (failing) options.log.info('wait-for-work answers again; wake-ups resume');
        failing = false;
        retryMs = baseRetryMs;
        if (queued && !stopped) options.wake();
        // A server that answers "nothing" long before the wait is over must not turn this into a busy loop.
        else if (!queued && !stopped && Date.now() - asked < waitMs / 2) await sleep(baseRetryMs);
      } catch (err) {
        if (stopped) break;
        // One warning per outage, not one per retry.
        if (!failing) {
          options.log.warn('wait-for-work failed; relying on polling until the server answers', {
            error: errorMessage(err),
          });
        }
        failing = true;
        await sleep(retryMs);
        retryMs = Math.min(retryMs * 2, 30_000);
      }
    }
  })();

  return () => {
    stopped = true;
    if (pause) {
      clearTimeout(pause.timer);
      pause.resolve();
    }
  };
}
