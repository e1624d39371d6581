import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'pg';

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Nearest-rank percentile of unsorted samples (p in 0..1). */
export const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(s.length * p) - 1))] ?? NaN;
};

export const round = (x: number, digits = 1): number => Number(x.toFixed(digits));

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Milliseconds on the monotonic clock; enqueue and handler start are in this one process. */
export const now = (): number => performance.now();

/** Resolves once `sql` (a count) returns 0, checking every 5 ms; for peers whose completion lands after the handler. */
export async function waitForZero(pool: Pool, sql: string, params: unknown[] = []): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ n: string }>(sql, params);
    if (Number(rows[0]?.n) === 0) return;
    await sleep(5);
  }
}

/** Calls `fn(i)` for i = 0.. every `intervalMs` for `seconds`, on a schedule that does not drift. */
export async function atSteadyRate(
  ratePerSecond: number,
  seconds: number,
  fn: (i: number) => Promise<unknown>,
): Promise<number> {
  const total = Math.round(ratePerSecond * seconds);
  const intervalMs = 1000 / ratePerSecond;
  const start = now();
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = start + i * intervalMs - now();
    if (wait > 0) await sleep(wait);
    pending.push(fn(i));
  }
  await Promise.all(pending);
  return total;
}

/** The installed version of an npm package, for the results JSON. */
export function installedVersion(pkg: string): string {
  const file = require.resolve(`${pkg}/package.json`);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
