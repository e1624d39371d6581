import { createServer, type Server, type Socket } from 'node:net';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { openStore, PING_TIMEOUT_MS } from '@sluice/store';

/*
 * ping() is what /ready asks. When the database does not answer — a
 * black-holed address, or every pool client waiting on a connect during an
 * outage — it must say "not ready" within its timeout instead of waiting for
 * the pool's connect timeout: a probe that times out reads as a hung process.
 */

let db: TestDatabase;
let silent: Server;
const sockets: Socket[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  // Accepts connections and never says a word, as a partitioned database host.
  silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent?.close(resolve));
  await db?.drop();
});

test('answers when the database does', async () => {
  const store = openStore(db.url);
  try {
    await expect(store.ping()).resolves.toBeUndefined();
  } finally {
    await store.close();
  }
});

test('rejects within its timeout when the database does not answer, well before the pool gives up', async () => {
  const address = silent.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const store = openStore(`postgres://sluice:x@127.0.0.1:${address.port}/sluice`, {
    connectionTimeoutMillis: 10_000,
  });
  try {
    const started = Date.now();
    await expect(store.ping()).rejects.toThrow(`no answer within ${PING_TIMEOUT_MS} ms`);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(PING_TIMEOUT_MS - 50);
    expect(waited).toBeLessThan(5_000);
  } finally {
    for (const socket of sockets) socket.destroy();
    await store.close().catch(() => undefined);
  }
});
