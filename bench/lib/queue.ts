import { createPool } from '@sluice/store';

/**
 * Replaces the queue with `count` QUEUED `process` task runs of one RUNNING
 * execution, each with its own created_at so "oldest first" has an order, then
 * VACUUM ANALYZE so the planner sees the real table.
 */
export async function queueTaskRuns(url: string, count: number): Promise<void> {
  const pool = createPool(url, { max: 1 });
  try {
    await pool.query('TRUNCATE executions CASCADE');
    await pool.query(
      `INSERT INTO executions (id, workspace, namespace, flow_id, definition, state)
       VALUES ('00000000-0000-4000-8000-000000000001', 'bench', 'bench', 'bench', '{}', 'RUNNING')`,
    );
    await pool.query(
      `INSERT INTO task_runs (id, execution_id, task_id, attempt, max_attempts, state, executor_type, pool,
                              executor, spec, timeout_ms, available_at, created_at)
       SELECT gen_random_uuid(), '00000000-0000-4000-8000-000000000001', 't' || i, 1, 1, 'QUEUED', 'process',
              'default', '{"type":"process","pool":"default"}', '{"type":"command","command":["true"]}', 60000,
              now(), now() + i * interval '1 microsecond'
       FROM generate_series(1, $1) AS i`,
      [count],
    );
    await pool.query('VACUUM ANALYZE task_runs');
  } finally {
    await pool.end();
  }
}
