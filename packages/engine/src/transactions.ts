import type { Pool, PoolClient } from 'pg';
import { withTransaction } from '@sluice/store';

// Deadlock and serialization failures are safe to retry: the transaction
// rolled back whole. They can happen when a completion (execution → task run
// lock order) meets the watchdog sweep (task runs first).
const RETRYABLE = new Set(['40P01', '40001']);

export async function inTransaction<T>(pool: Pool, fn: (tx: PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await withTransaction(pool, fn);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt >= 5 || !code || !RETRYABLE.has(code)) throw err;
      await new Promise((r) => setTimeout(r, 10 * attempt + Math.random() * 20));
    }
  }
}
