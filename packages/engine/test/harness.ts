import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import {
  claimTaskRuns,
  createPool,
  listTaskRunsOfExecution,
  Store,
  type ClaimedTaskRunRow,
  type TaskRunRow,
} from '@sluice/store';
import { parseFlow } from '@sluice/flows';
import { SecretKeyring } from '@sluice/secrets';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { DEFAULT_ENGINE_SETTINGS, Engine, type EngineSettings } from '@sluice/engine';

/** The workspace of the harness's flows. */
export const WORKSPACE = 'w';

export interface EngineHarness {
  db: TestDatabase;
  pool: Pool;
  engine: Engine;
  queuedSignals: number;
  storeFlow(flowId: string, yaml: string, namespace?: string, workspace?: string): Promise<void>;
  claimAll(executorTypes?: Array<'process' | 'inline'>): Promise<ClaimedTaskRunRow[]>;
  runsOf(executionId: string): Promise<TaskRunRow[]>;
  close(): Promise<void>;
}

export async function startEngine(settings: Partial<EngineSettings> = {}): Promise<EngineHarness> {
  const db = await createTestDatabase();
  const pool = createPool(db.url);
  const store = new Store(pool, { databaseUrl: db.url });
  const h: EngineHarness = {
    db,
    pool,
    queuedSignals: 0,
    engine: undefined as unknown as Engine,
    async storeFlow(flowId, yaml, namespace = 'ns', workspace = WORKSPACE) {
      const parsed = parseFlow(yaml, { namespace, flowId });
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
      await pool.query(
        `INSERT INTO flows (workspace, namespace, flow_id, source, definition) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (workspace, namespace, flow_id)
           DO UPDATE SET source = EXCLUDED.source, definition = EXCLUDED.definition`,
        [workspace, namespace, flowId, yaml, JSON.stringify(parsed.flow)],
      );
    },
    // Consumers run first, as `sluice jobs` would have between two claims.
    claimAll: async (executorTypes = ['process', 'inline']) => {
      await h.engine.processPendingEvents();
      return claimTaskRuns(pool, { ownerId: 'test', executorTypes, pools: ['default'], limit: 100 });
    },
    runsOf: (executionId) => listTaskRunsOfExecution(pool, executionId),
    async close() {
      await store.close();
      await db.drop();
    },
  };
  h.engine = new Engine({
    store,
    keyring: new SecretKeyring([randomBytes(32)]),
    settings: { ...DEFAULT_ENGINE_SETTINGS, jwtSecret: 'engine-test-secret-123456', ...settings },
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    onQueued: () => {
      h.queuedSignals += 1;
    },
  });
  return h;
}

/** Ends a claimed task run as its runner would, then lets the event consumers run. */
export async function succeed(h: EngineHarness, run: Pick<TaskRunRow, 'id' | 'fence'>, exitCode = 0) {
  const result = await h.engine.finishTaskRun({
    taskRunId: run.id,
    fence: run.fence,
    state: exitCode === 0 ? 'SUCCEEDED' : 'FAILED',
    reason: exitCode === 0 ? null : 'exit_code',
    exitCode,
  });
  await h.engine.processPendingEvents();
  return result;
}
