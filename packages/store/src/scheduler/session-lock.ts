import { Pool } from 'pg';
import { connectionOf, type Store } from '../handle';

/**
 * Runs fn while this process holds the session advisory lock `key` on one
 * connection of the store's pool; answers `{ locked: false }` without running
 * fn when another session holds it. The lock is released after fn (a failed
 * unlock destroys the connection, which drops the lock too).
 */
export async function withSessionLock<T>(
  store: Store,
  key: number,
  fn: () => Promise<T>,
): Promise<{ locked: false } | { locked: true; value: T }> {
  const pool = connectionOf(store);
  if (!(pool instanceof Pool)) throw new Error('withSessionLock: needs a Store');
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const lock = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key]);
    if (!lock.rows[0]?.locked) return { locked: false };
    try {
      return { locked: true, value: await fn() };
    } finally {
      // A session lock outlives the cycle unless released; if the unlock itself fails the
      // connection is suspect, so it is destroyed (which also drops the lock).
      await client.query('SELECT pg_advisory_unlock($1)', [key]).catch((err: unknown) => {
        broken = err instanceof Error ? err : new Error(String(err));
      });
    }
  } finally {
    client.release(broken);
  }
}
