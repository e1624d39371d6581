import { Pool, type PoolClient, type PoolConfig } from 'pg';
import { Store } from './handle';

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

/** A Store on a new pool for `url` (Prisma and LISTEN connect to the same URL). */
export function openStore(url: string, opts: CreatePoolOptions = {}): Store {
  return new Store(createPool(url, opts), { databaseUrl: url });
}
