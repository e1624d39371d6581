/**
 * A broadcast that wakes whoever waits on it: the engine has one for "task
 * runs were queued" (its own commits and the server's LISTEN on the queued
 * channel; awaited by the executor API's wait-for-work, which executors
 * relay to their instance with relayQueuedWork) and one for "events were
 * written" (awaited by the event consumer).
 */
export class WakeSignal {
  private waiters = new Set<(queued: boolean) => void>();

  notify(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const resolve of waiters) resolve(true);
  }

  /** Resolves true on the next notify(), false after `timeoutMs`. */
  wait(timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (queued: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(queued);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(done);
    });
  }

  /** Releases every waiter (false): used on shutdown so long polls answer at once. */
  close(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const resolve of waiters) resolve(false);
  }
}
