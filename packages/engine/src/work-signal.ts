/**
 * "Task runs were queued somewhere": raised by this process's own commits and
 * by the server's LISTEN on the queued channel, awaited by local instances
 * and by executors long-polling the executor API.
 */
export class WorkSignal {
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
