import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import type { PrismaClient } from './generated/prisma/client';

/*
 * The handles engine, jobs and api hold instead of a pg Pool or a Prisma
 * client. What a handle is connected to stays inside this package: the
 * WeakMap below is not exported, so code outside the store cannot reach the
 * connection and send SQL of its own.
 */
const connections = new WeakMap<object, Pool | PoolClient>();
const prismaClients = new WeakMap<Store, { url: string | undefined; client: PrismaClient | undefined }>();

/** A transaction of a Store: every store function given it runs on the transaction's one connection. */
export class Transaction {
  /** Only Store.inTransaction (and store-internal helpers) open one. */
  constructor(client: PoolClient) {
    connections.set(this, client);
  }
}

// Deadlock and serialization failures are safe to retry: the transaction
// rolled back whole. They can happen when a completion (execution → task run
// lock order) meets the watchdog sweep (task runs first).
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_TRANSACTION_ATTEMPTS = 5;

export interface StoreOptions {
  /** Where Prisma and the LISTEN connection connect; needed for flows, files and startNotifyRelay. */
  databaseUrl?: string;
  /** A Prisma client to use instead of creating one from databaseUrl on first use. */
  prisma?: PrismaClient;
}

/**
 * The database of one process: the pg pool, the Prisma client (created on
 * first use) and the transaction helper. Every store function takes a
 * Queryable: the Store itself (each call on whichever connection is free) or
 * the Transaction that inTransaction hands out.
 */
/** How long a /ready probe waits for the database before it says not-ready. */
export const PING_TIMEOUT_MS = 1_000;

export class Store {
  readonly #pool: Pool;
  readonly #databaseUrl: string | undefined;

  constructor(pool: Pool, options: StoreOptions = {}) {
    connections.set(this, pool);
    prismaClients.set(this, { url: options.databaseUrl, client: options.prisma });
    this.#pool = pool;
    this.#databaseUrl = options.databaseUrl;
  }

  /** The database URL this store was opened with (for a dedicated LISTEN connection). */
  get databaseUrl(): string {
    if (this.#databaseUrl === undefined) throw new Error('this Store was built without a databaseUrl');
    return this.#databaseUrl;
  }

  /**
   * Runs fn in one transaction: COMMIT when it resolves, ROLLBACK when it
   * throws. A deadlock or serialization failure runs fn again (up to 5
   * times), so fn must not have effects outside the transaction.
   */
  async inTransaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await withTransaction(this.#pool, (client) => fn(new Transaction(client)));
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (attempt >= MAX_TRANSACTION_ATTEMPTS || !code || !RETRYABLE.has(code)) throw err;
        await new Promise((r) => setTimeout(r, 10 * attempt + Math.random() * 20));
      }
    }
  }

  /**
   * Resolves when the database answers (the /ready probes); rejects with its error otherwise, or
   * when it has not answered within `timeoutMs`: during an outage every pool client can be busy
   * connecting, and a probe that waits for one would time out instead of saying not-ready.
   */
  async ping(timeoutMs = PING_TIMEOUT_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const noAnswer = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    const query = this.#pool.query('SELECT 1');
    // The query may still fail after the timeout; nobody waits for it then.
    query.catch(() => undefined);
    try {
      await Promise.race([query, noAnswer]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the Prisma client (when one was opened) and the pool. */
  async close(): Promise<void> {
    const prisma = prismaClients.get(this);
    const client = prisma?.client;
    if (prisma) prisma.client = undefined;
    if (client) await client.$disconnect();
    await this.#pool.end();
  }
}

/**
 * Anything a store function runs on: a Store, one of its Transactions, or —
 * for the store's own tests and the benchmarks — a bare pg Pool or PoolClient.
 */
export type Queryable = Store | Transaction | Pool | PoolClient;

/** What a statement that must run inside a transaction (row locks, xact advisory locks) takes. */
export type TransactionScope = Transaction | PoolClient;

/** The pg connection behind a handle. Store-internal: not exported from the package. */
export function connectionOf(db: Queryable): Pool | PoolClient {
  return connections.get(db) ?? (db as Pool | PoolClient);
}

/** Runs one statement on a handle: plain text with values, or a named (prepared) QueryConfig. */
export async function query<R extends QueryResultRow>(
  db: Queryable,
  text: string | QueryConfig,
  values: unknown[] = [],
): Promise<QueryResult<R>> {
  const conn = connectionOf(db);
  return typeof text === 'string' ? conn.query<R>(text, values) : conn.query<R>(text);
}

/** Store-internal: the Prisma client behind a store. */
export function prismaOf(store: Store): PrismaClient {
  const prisma = prismaClients.get(store);
  if (!prisma) throw new Error('not a Store');
  if (!prisma.client) {
    if (prisma.url === undefined) throw new Error('this Store was built without a databaseUrl for Prisma');
    prisma.client = createPrismaClient(prisma.url);
  }
  return prisma.client;
}

/** Runs fn in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws. */
export async function withTransaction<T>(pool: Pool, fn: (tx: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackErr) {
      broken = rollbackErr; // the connection is unusable: do not return it to the pool
    }
    throw err;
  } finally {
    client.release(broken instanceof Error ? broken : undefined);
  }
}

/**
 * A Prisma client for the plain CRUD parts of the model (flows, namespace
 * files). Queries go through @prisma/adapter-pg. The generated client and
 * the adapter are loaded on first use, so processes that never need Prisma
 * (executors, the runner) do not pay for loading them.
 */
export function createPrismaClient(url: string): PrismaClient {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { PrismaPg } = require('@prisma/adapter-pg') as typeof import('@prisma/adapter-pg');
  const generated = require('./generated/prisma/client') as typeof import('./generated/prisma/client');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return new generated.PrismaClient({ adapter: new PrismaPg({ connectionString: url }) });
}

export type { PrismaClient };
