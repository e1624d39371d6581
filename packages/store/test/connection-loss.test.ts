import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { getFlow, getTaskRun, openStore, type Store } from '@sluice/store';

/*
 * When PostgreSQL ends a store's connections (a restart, a failover, an
 * operator's pg_terminate_backend), the idle ones fail inside the pool and
 * Prisma's pool, and nothing is waiting on them. The process must not crash
 * on that error, and the next call opens a new connection.
 */

const APP = 'sluice-connection-loss-test';
let db: TestDatabase;
let store: Store;
let admin: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  store = openStore(db.url, { applicationName: APP });
  admin = new Client({ connectionString: db.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await store?.close();
  await db?.drop();
});

async function terminateStoreConnections(): Promise<number> {
  const r = await admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
  );
  return r.rowCount ?? 0;
}

test('idle connections ended by the server do not crash the process; the next calls reconnect', async () => {
  // Open idle connections in both pools: several pg ones, and Prisma's.
  await Promise.all([store.ping(), store.ping(), store.ping()]);
  await getFlow(store, { workspace: 'w', namespace: 'ns' }, 'none');
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown): void => void uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    expect(await terminateStoreConnections()).toBeGreaterThanOrEqual(2);
    // Let the 'error' events of the idle clients fire.
    await new Promise((r) => setTimeout(r, 200));

    await store.ping();
    expect(await getTaskRun(store, '00000000-0000-0000-0000-000000000000')).toBeNull();
    expect(await store.inTransaction(async () => 'committed')).toBe('committed');
    expect(await getFlow(store, { workspace: 'w', namespace: 'ns' }, 'none')).toBeNull();
    expect(uncaught).toEqual([]);
  } finally {
    process.off('uncaughtException', onUncaught);
  }
});
