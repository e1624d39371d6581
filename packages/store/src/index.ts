/**
 * @sluice/store — the one home of every SQL statement and Prisma call
 * (docs/store.md).
 *
 * Shape:
 * - A `Store` (openStore(url, options), or `new Store(pool, { databaseUrl })`)
 *   is the database of one process: the pg pool, the Prisma client (opened on
 *   first use) and the transaction helper. Engine, jobs and api hold a Store,
 *   never a Pool or a PrismaClient, and close it with `store.close()`.
 * - Every store function is a typed function of its own, grouped by table:
 *   executions/, task-runs/, events/, secrets/, snapshots/, flows/, files/,
 *   executor-claims/, retention/, plus instances, logs, outputs, metrics,
 *   artifacts. Its first parameter is the handle it runs on.
 * - Handles: `Queryable` = the Store (each call on a free connection) or a
 *   `Transaction`; `store.inTransaction(tx => ...)` runs a callback in one
 *   transaction (retried whole on deadlock), and the same functions accept
 *   `tx`. Functions that lock rows take `TransactionScope` (a Transaction).
 *   A bare pg Pool / PoolClient is also a Queryable, for the store's tests
 *   and bench/ only.
 * - Flows and namespace files go through Prisma; those functions take the
 *   Store itself (Prisma calls cannot join a pg transaction).
 * - Fencing: every write of a task run's holder is conditional on its fence
 *   (task-runs/), and every end by someone else bumps it; no fenced write
 *   lives outside this package.
 * - LISTEN/NOTIFY: startNotifyRelay holds the one dedicated LISTEN connection.
 */
export { createPool, openStore, type CreatePoolOptions } from './db';
export {
  PING_TIMEOUT_MS,
  Store,
  Transaction,
  createPrismaClient,
  withTransaction,
  type PrismaClient,
  type Queryable,
  type StoreOptions,
  type TransactionScope,
} from './handle';
export * from './migrate';
export * from './workspaces';
export * from './rows';
export * from './errors';
export * from './task-runs/claim';
export * from './task-runs/start';
export * from './task-runs/heartbeat';
export * from './task-runs/complete';
export * from './task-runs/watchdog';
export * from './task-runs/end-by-others';
export * from './task-runs/lookups';
export * from './task-runs/insert';
export * from './task-runs/state-conditions';
export * from './task-runs/fail-at-queue';
export * from './task-runs/subflow-parking';
export * from './task-runs/counts';
export * from './executions/rows';
export * from './executions/create';
export * from './executions/lookups';
export * from './executions/state';
export * from './executions/concurrency';
export * from './executions/list';
export * from './namespaces/list';
export * from './events/outbox';
export * from './events/consume';
export * from './secrets/write';
export * from './secrets/read';
export * from './snapshots/insert';
export * from './snapshots/read';
export * from './flows/read';
export * from './flows/write';
export * from './flows/schedules';
export * from './files/read';
export * from './files/write';
export * from './executor-claims/record';
export * from './retention/delete-expired';
export * from './scheduler/session-lock';
export * from './notify/relay';
export * from './logs';
export * from './outputs';
export * from './metrics';
export * from './artifacts';
export * from './sync';
export * from './connections/read';
export * from './instances';
export * from './databases/ensure-database';
export * from './databases/probe-connection';
