import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import type { ExecutorType } from '@sluice/protocol';
import {
  claimTaskRuns,
  completeTaskRunWithEvent,
  createPool,
  insertTaskRun,
  type ClaimedTaskRunRow,
  type CompleteResult,
  type CompleteTaskRun,
  type Queryable,
  type TaskRunRow,
} from '@sluice/store';

/** An execution row for task runs to belong to (the engine writes these for real). */
export async function seedExecution(pool: Pool): Promise<string> {
  const id = randomUUID();
  await pool.query(
    `INSERT INTO executions (id, workspace, namespace, flow_id, definition, state)
     VALUES ($1, 'w', 'ns', 'flow', '{}', 'RUNNING')`,
    [id],
  );
  return id;
}

export async function queueOne(
  pool: Pool,
  executionId: string,
  over: {
    taskId?: string;
    attempt?: number;
    executorType?: ExecutorType;
    pool?: string;
    availableAt?: Date;
  } = {},
): Promise<TaskRunRow> {
  return insertTaskRun(pool, {
    executionId,
    taskId: over.taskId ?? `t-${randomUUID().slice(0, 8)}`,
    attempt: over.attempt ?? 1,
    maxAttempts: 3,
    executorType: over.executorType ?? 'process',
    pool: over.pool ?? 'default',
    executor: { type: over.executorType ?? 'process', pool: over.pool ?? 'default' },
    spec: { type: 'command', command: ['true'] },
    timeoutMs: 60_000,
    availableAt: over.availableAt,
  });
}

/**
 * Bulk-queues `count` process task runs in one statement, created 1 ms apart
 * in the past so their claim order is known: task ids t00000, t00001, ...
 */
export async function queueMany(
  pool: Pool,
  executionId: string,
  count: number,
  over: { executorType?: ExecutorType; pool?: string } = {},
): Promise<void> {
  await pool.query(
    `INSERT INTO task_runs (id, execution_id, task_id, attempt, max_attempts, state, executor_type, pool,
                            executor, spec, timeout_ms, available_at, created_at)
     SELECT gen_random_uuid(), $1, 't' || lpad(i::text, 5, '0'), 1, 1, 'QUEUED', $3, $4, '{}', '{}', 60000,
            now() - interval '1 hour', now() - interval '1 hour' + i * interval '1 millisecond'
     FROM generate_series(0, $2 - 1) AS i`,
    [executionId, count, over.executorType ?? 'process', over.pool ?? 'default'],
  );
}

/** Claims one process/default task run as `ownerId` and fails the test when there is none. */
export async function claimOne(pool: Pool, ownerId = 'owner-a'): Promise<ClaimedTaskRunRow> {
  const [run] = await claimTaskRuns(pool, {
    ownerId,
    executorTypes: ['process'],
    pools: ['default'],
    limit: 1,
  });
  if (!run) throw new Error('expected a claimable task run');
  return run;
}

/** A test file's own database and a pool on it (see useStoreDatabase). */
export interface StoreDatabase {
  readonly url: string;
  readonly pool: Pool;
}

/**
 * Registers beforeAll/afterAll of the calling describe block: a database of
 * its own, migrated, with a pool on it; afterwards the pool is closed and the
 * database dropped.
 */
export function useStoreDatabase(): StoreDatabase {
  let db: TestDatabase | undefined;
  let pool: Pool | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createPool(db.url);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useStoreDatabase: read before its beforeAll ran');
    return value;
  };
  return {
    get url() {
      return ready(db).url;
    },
    get pool() {
      return ready(pool);
    },
  };
}

/**
 * The holder's completion as production writes it (completeTaskRunWithEvent),
 * for tests about the completion's decisions rather than its event.
 */
export function completeTaskRun(db: Queryable, req: CompleteTaskRun): Promise<CompleteResult> {
  return completeTaskRunWithEvent(db, req, { kind: 'task_run.ended', channel: 'sluice_store_test' });
}
