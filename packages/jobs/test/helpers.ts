import type { Pool } from 'pg';
import { createPool, Store } from '@sluice/store';
import { DEFAULT_ENGINE_SETTINGS, Engine } from '@sluice/engine';
import { parseFlow } from '@sluice/flows';
import { createTestDatabase, silentLogger, type TestDatabase } from '@sluice/testing';

/** The workspace of the harness's flows. */
export const WORKSPACE = 'w';

export interface JobsHarness {
  db: TestDatabase;
  pool: Pool;
  /** The harness's pool as the store handle the jobs take. */
  store: Store;
  /** As `sluice jobs` builds it: no keyring, no JWT secret. */
  engine: Engine;
  /**
   * Stores a one-task flow (a process task in `pool`, default `default`); `schedule` goes to the
   * flows.schedule column as the API writes it.
   */
  storeFlow(
    flowId: string,
    schedule: string | null,
    options?: { updatedAt?: Date; pool?: string; workspace?: string; yamlLines?: string[] },
  ): Promise<void>;
  /** The database's clock truncated to a whole second. */
  dbSecond(): Promise<Date>;
  scheduledFor(flowId: string): Promise<Date[]>;
  close(): Promise<void>;
}

export async function startJobsHarness(): Promise<JobsHarness> {
  const db = await createTestDatabase();
  const pool = createPool(db.url, { max: 20 });
  const store = new Store(pool, { databaseUrl: db.url });
  const engine = new Engine({
    store,
    settings: { ...DEFAULT_ENGINE_SETTINGS, jwtSecret: '' },
    log: silentLogger,
  });
  return {
    db,
    pool,
    store,
    engine,
    async storeFlow(flowId, schedule, options = {}) {
      const yaml = [
        ...(schedule ? [`schedule: "${schedule}"`] : []),
        ...(options.pool ? ['executor:', `  pool: ${options.pool}`] : []),
        ...(options.yamlLines ?? []),
        'tasks:',
        '  - id: tick',
        '    type: command',
        '    command: ["true"]',
        '',
      ].join('\n');
      const parsed = parseFlow(yaml, { namespace: 'ns', flowId });
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
      await pool.query(
        `INSERT INTO flows (workspace, namespace, flow_id, source, definition, schedule, updated_at)
         VALUES ($6, 'ns', $1, $2, $3, $4, COALESCE($5, now()))`,
        [
          flowId,
          yaml,
          JSON.stringify(parsed.flow),
          schedule,
          options.updatedAt ?? null,
          options.workspace ?? WORKSPACE,
        ],
      );
    },
    async dbSecond() {
      const r = await pool.query<{ t: Date }>(`SELECT date_trunc('second', now()) AS t`);
      return r.rows[0]!.t;
    },
    async scheduledFor(flowId) {
      const r = await pool.query<{ scheduled_for: Date }>(
        `SELECT scheduled_for FROM executions WHERE flow_id = $1 AND trigger = 'schedule' ORDER BY scheduled_for`,
        [flowId],
      );
      return r.rows.map((row) => row.scheduled_for);
    },
    async close() {
      await store.close();
      await db.drop();
    },
  };
}
