import type { Pool } from 'pg';
import { ExecutorApiClient, INTERNAL_SECRET_HEADER } from '@sluice/protocol';

export const EXECUTOR_TOKEN = 'executor-api-token-5f2c9a7e1b';

/** A real client with quick retries, so a test that exhausts them stays short. */
export function executorClient(baseUrl: string, token = EXECUTOR_TOKEN, fetchImpl?: typeof fetch) {
  return new ExecutorApiClient({
    baseUrl,
    token,
    fetch: fetchImpl,
    retry: { maxElapsedMs: 2_000, initialDelayMs: 10, maxDelayMs: 100 },
    waitForWorkRetryPauseMs: 10,
  });
}

/** One plain HTTP call, for what the typed client would never send. */
export async function rawCall(
  baseUrl: string,
  path: string,
  opts: { method?: string; secret?: string; body?: string | object; headers?: Record<string, string> } = {},
): Promise<{
  status: number;
  text: string;
  json: { error?: { code: string; message: string } } & Record<string, unknown>;
}> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (opts.secret !== undefined) headers[INTERNAL_SECRET_HEADER] = opts.secret;
  const res = await fetch(baseUrl + path, {
    method: opts.method ?? 'POST',
    headers,
    body:
      opts.body === undefined
        ? undefined
        : typeof opts.body === 'string'
          ? opts.body
          : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let json = {};
  try {
    json = JSON.parse(text) as object;
  } catch {
    // left empty: the test looks at the status
  }
  return { status: res.status, text, json };
}

export async function stateOf(
  pool: Pool,
  taskRunId: string,
): Promise<{ state: string; fence: number; ownerId: string | null }> {
  const { rows } = await pool.query<{ state: string; fence: number; owner_id: string | null }>(
    'SELECT state, fence, owner_id FROM task_runs WHERE id = $1',
    [taskRunId],
  );
  const row = rows[0];
  if (!row) throw new Error(`no task run ${taskRunId}`);
  return { state: row.state, fence: row.fence, ownerId: row.owner_id };
}

export async function taskRunsOf(
  pool: Pool,
  executionId: string,
): Promise<Array<{ id: string; state: string }>> {
  const { rows } = await pool.query<{ id: string; state: string }>(
    'SELECT id, state FROM task_runs WHERE execution_id = $1 ORDER BY task_id',
    [executionId],
  );
  return rows;
}

/** A flow of `tasks` independent command tasks on one executor block. */
export function flowYaml(executor: string, tasks = 1): string {
  const lines = [`executor: ${executor}`, 'tasks:'];
  for (let i = 0; i < tasks; i++) lines.push(`  - id: t${i}`, '    type: command', '    command: ["true"]');
  return lines.join('\n');
}
