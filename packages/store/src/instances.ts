import type { ExecutorType, InstanceRegistration } from '@sluice/protocol';
import { query, type Queryable } from './handle';
import { toInstanceRow, type InstanceRow } from './rows';

/**
 * An instance (re-)registers on start and periodically: the row is replaced
 * with what it says now (pools and executors may change across restarts),
 * registered_at keeps the first registration and last_seen_at is now.
 */
export async function registerInstance(db: Queryable, reg: InstanceRegistration): Promise<InstanceRow> {
  const { rows } = await query(
    db,
    `INSERT INTO instances (id, type, version, capacity, pools, executors, resource_defaults)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (id) DO UPDATE SET
       type = EXCLUDED.type, version = EXCLUDED.version, capacity = EXCLUDED.capacity,
       pools = EXCLUDED.pools, executors = EXCLUDED.executors,
       resource_defaults = EXCLUDED.resource_defaults, last_seen_at = now()
     RETURNING *`,
    [
      reg.instanceId,
      reg.type,
      reg.version,
      JSON.stringify(reg.capacity),
      reg.pools,
      reg.executors,
      JSON.stringify(reg.resourceDefaults ?? {}),
    ],
  );
  return toInstanceRow(rows[0] as Record<string, unknown>);
}

/** Every instance, or those seen within `seenWithinMs`; by id. */
export async function listInstances(
  db: Queryable,
  opts: { seenWithinMs?: number } = {},
): Promise<InstanceRow[]> {
  const { rows } = await query(
    db,
    `SELECT * FROM instances
     WHERE $1::float8 IS NULL OR last_seen_at >= now() - $1::float8 * interval '1 millisecond'
     ORDER BY id`,
    [opts.seenWithinMs ?? null],
  );
  return rows.map(toInstanceRow);
}

export interface ServedPool {
  executorType: ExecutorType;
  /** '' for inline: any instance with the inline executor serves every inline task run. */
  pool: string;
}

/**
 * The (executor type, pool) pairs some instance seen within `seenWithinMs`
 * serves: a queued task run outside this set waits with reason
 * `no_instance_for_pool`.
 */
export async function servedPools(db: Queryable, seenWithinMs: number): Promise<ServedPool[]> {
  const { rows } = await query<{ executor_type: ExecutorType; pool: string }>(
    db,
    `SELECT DISTINCT e.executor_type, p.pool
     FROM instances i
     CROSS JOIN LATERAL unnest(i.executors) AS e(executor_type)
     CROSS JOIN LATERAL unnest(CASE WHEN e.executor_type = 'inline' THEN ARRAY[''] ELSE i.pools END) AS p(pool)
     WHERE i.last_seen_at >= now() - $1::float8 * interval '1 millisecond'
     ORDER BY 1, 2`,
    [seenWithinMs],
  );
  return rows.map((r) => ({ executorType: r.executor_type, pool: r.pool }));
}
