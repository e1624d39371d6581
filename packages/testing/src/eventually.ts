/** What a check answers while the awaited thing has not happened yet. */
export type NotYet = undefined | null | false;

/**
 * Polls `check` (sync or async) until it answers something other than
 * undefined, null or false, and resolves with that; fails naming `what`
 * after `ms`. For waits on real processes, timers and databases, where a
 * fixed sleep would be either slow or flaky.
 */
export async function eventually<T>(
  what: string,
  check: () => T | NotYet | Promise<T | NotYet>,
  ms = 10_000,
  intervalMs = 20,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
