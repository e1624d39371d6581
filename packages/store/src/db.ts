import { Pool, type PoolClient, type PoolConfig, type QueryResult, type QueryResultRow } from 'pg';
import type { PrismaClient } from './generated/prisma/client';

/**
 * Anything that runs one query: the pool (each call on whatever connection is
 * free) or a client inside a transaction. Every store function takes one, so
 * the engine can compose several of them atomically with withTransaction.
 */
export type Queryable = Pool | PoolClient;

/** The one query signature store functions rely on (Pool and PoolClient both fit). */
export async function query<R extends QueryResultRow>(
  db: Queryable,
  text: string,
  values: unknown[] = [],
): Promise<QueryResult<R>> {
  return db.query<R>(text, values);
}

export interface CreatePoolOptions {
  /** Most connections this process opens (pg's default is 10). */
  max?: number;
  /** Shown in pg_stat_activity: which Sluice process holds a connection. */
  applicationName?: string;
  idleTimeoutMillis?: number;
  connectionTimeoutMillis?: number;
  /**
   * Whether the store's hot statements go out as named prepared statements
   * (default true). False strips the names, for poolers in transaction mode
   * that hand each transaction a different server connection.
   */
  preparedStatements?: boolean;
}

export function createPool(url: string, opts: CreatePoolOptions = {}): Pool {
  const config: PoolConfig = {
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'sluice',
    idleTimeoutMillis: opts.idleTimeoutMillis ?? 30_000,
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 10_000,
  };
  const pool = new Pool(config);
  // An idle client that loses its connection (database restart) emits 'error'
  // on the pool; without a listener that would crash the process. The next
  // query simply opens a new connection.
  pool.on('error', () => undefined);
  if (opts.preparedStatements === false) pool.on('connect', sendUnnamed);
  return pool;
}

/**
 * Makes a connection send every query unnamed. A named statement lives on the
 * server connection that prepared it; behind a transaction-mode pooler the
 * next call may land on another one and fail with "prepared statement does not
 * exist". pool.query and transaction clients both go through client.query,
 * so patching it on connect covers every path.
 */
function sendUnnamed(client: PoolClient): void {
  const send = client.query.bind(client) as (...args: unknown[]) => unknown;
  const unnamed = (config: unknown, ...rest: unknown[]): unknown => {
    if (config !== null && typeof config === 'object' && 'name' in config && 'text' in config) {
      const { name: _name, ...plain } = config as Record<string, unknown>;
      return send(plain, ...rest);
    }
    return send(config, ...rest);
  };
  client.query = unnamed as PoolClient['query'];
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
 * A Prisma client for the plain CRUD parts of the model (flows, files,
 * snapshots). Queries go through @prisma/adapter-pg. The generated client and
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
