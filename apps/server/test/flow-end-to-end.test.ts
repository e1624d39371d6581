import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import {
  adminToken,
  apiClient,
  ended,
  JWT_SECRET,
  MASTER_KEY,
  startStandalone,
  type StandaloneServer,
} from './standalone';

const SECRET_VALUE = 'sk-live-7f3a9c1e5b2d';
const SERVER_ONLY = 'server-only-value-91b2';
// The task compares a digest, so the flow itself never holds the value.
const SECRET_SHA256 = createHash('sha256').update(SECRET_VALUE).digest('hex');

let db: TestDatabase;
let server: StandaloneServer;
let hook: Server;
let hookPort = 0;
const hookBodies: string[] = [];
let api: ReturnType<typeof apiClient>;

beforeAll(async () => {
  db = await createTestDatabase();
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hookBodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"accepted":true,"count":1}');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  hookPort = (hook.address() as { port: number }).port;
  server = await startStandalone(db.url, {
    // Server-side configuration that must never reach a task.
    PIPELINE_EXECUTOR_API_TOKEN: 'executor-token-5e8d1f',
    SERVER_ONLY_SETTING: SERVER_ONLY,
    // The whole flow with unnamed statements, as behind PgBouncer in transaction mode
    // (the other end-to-end files run with the default, prepared statements).
    SLUICE_DATABASE_PREPARED_STATEMENTS: 'false',
  });
  api = apiClient(server.publicUrl, await adminToken());
});

afterAll(async () => {
  await server?.stop();
  await new Promise((r) => hook?.close(r));
  await db?.drop();
});

const FLOW = (port: number) => `
tasks:
  - id: fetch
    type: command
    command: ["sh", "-c", "i=1; while [ $i -le 300 ]; do echo line-$i; i=$((i+1)); done; echo warn-1 >&2; echo rows=42 >> \\"$SLUICE_OUTPUTS\\"; if [ \\"$(printf %s \\"$API_TOKEN\\" | sha256sum | cut -c1-64)\\" = '${SECRET_SHA256}' ]; then echo secret-arrived; fi"]
    env:
      API_TOKEN: { secret: api-token }
  - id: report
    type: script
    interpreter: sh
    script: |
      echo "fetched {{ outputs.fetch.rows }} rows"
      echo "total=$(( {{ outputs.fetch.rows }} + 1 ))" >> "$SLUICE_OUTPUTS"
      mkdir -p "$SLUICE_ARTIFACTS/out" && echo "rows,42" > "$SLUICE_ARTIFACTS/out/report.csv"
    depends_on: [fetch]
  - id: notify
    type: http
    request:
      method: POST
      url: "http://127.0.0.1:${port}/hook"
      body: { rows: "{{ outputs.fetch.rows }}", total: "{{ outputs.report.total }}" }
    depends_on: [report]
`;

describe('sluice server --standalone, end to end', () => {
  it('runs a command, a dependent script and an http task to SUCCEEDED', async () => {
    expect((await api.putSecret('demo', 'api-token', SECRET_VALUE)).status).toBe(204);
    const put = await api.putFlow('demo', 'pipeline', FLOW(hookPort));
    expect(put.status).toBe(200);
    const id = await api.run('demo', 'pipeline');
    const execution = await api.waitFor(id, ended);
    expect(execution.state).toBe('SUCCEEDED');

    const run = (taskId: string) => {
      const found = execution.taskRuns.find((r) => r.taskId === taskId);
      if (!found) throw new Error(`no task run for ${taskId}`);
      return found;
    };
    const byTask = { fetch: run('fetch'), report: run('report'), notify: run('notify') };
    expect(execution.taskRuns).toHaveLength(3);
    for (const run of execution.taskRuns) expect(run).toMatchObject({ state: 'SUCCEEDED', attempt: 1 });
    expect(byTask.fetch.executor).toEqual({ type: 'process', pool: 'default', image: null });
    expect(byTask.fetch.externalRef).toMatch(/^pid:\d+$/);
    expect(byTask.notify.executor).toMatchObject({ type: 'inline' });

    // Logs: complete and in order within each stream (the two pipes interleave as the OS delivers them).
    const fetchLogs = await api.logs(byTask.fetch.id);
    expect(fetchLogs.filter((l) => l.stream === 'stdout').map((l) => l.line)).toEqual([
      ...Array.from({ length: 300 }, (_, i) => `line-${i + 1}`),
      'secret-arrived',
    ]);
    expect(fetchLogs.filter((l) => l.stream === 'stderr').map((l) => l.line)).toEqual(['warn-1']);
    const seqs = (await api.logs(byTask.fetch.id)).map((l) => l.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));

    // The first task's output reached the second, and both reached the http task.
    expect((await api.logs(byTask.report.id)).map((l) => l.line)).toContain('fetched 42 rows');
    expect(byTask.fetch.outputs).toEqual({ rows: '42' });
    expect(JSON.parse(hookBodies[0]!)).toEqual({ rows: '42', total: '43' });
    expect(byTask.notify.outputs).toMatchObject({ status: '200', 'json.count': '1' });

    // The artifact the script left behind is listed and downloadable.
    const artifacts = await api.call('GET', `/api/v1/task-runs/${byTask.report.id}/artifacts`);
    expect(artifacts.body.artifacts).toEqual([expect.objectContaining({ name: 'out/report.csv', size: 8 })]);
    const file = await api.call('GET', `/api/v1/task-runs/${byTask.report.id}/artifacts/out/report.csv`);
    expect(file.status).toBe(200);
    expect(file.body).toBe('rows,42\n');
  });

  it('ends a task run that outlives its timeout FAILED with reason timeout, and retries it', async () => {
    const flow =
      'retry: { max_attempts: 2 }\ntasks:\n  - id: slow\n    type: command\n    timeout: 1s\n    command: ["sleep", "30"]\n';
    expect((await api.putFlow('demo', 'slow', flow)).status).toBe(200);
    const id = await api.run('demo', 'slow');
    const execution = await api.waitFor(id, ended, 30_000);
    expect(execution.state).toBe('FAILED');
    expect(execution.taskRuns.map((r) => [r.attempt, r.state, r.reason])).toEqual([
      [1, 'FAILED', 'timeout'],
      [2, 'FAILED', 'timeout'],
    ]);
  });

  it('keeps the secret out of the stored task runs, the API answers and the server logs', async () => {
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    try {
      const dump = await pg.query(
        `SELECT coalesce(string_agg(t.spec::text || t.executor::text || coalesce(t.error, ''), ''), '') AS specs,
                (SELECT coalesce(string_agg(definition::text, ''), '') FROM executions) AS defs,
                (SELECT coalesce(string_agg(line, ''), '') FROM task_run_logs) AS logs
         FROM task_runs t`,
      );
      const row = dump.rows[0];
      expect(row.specs).toContain('api-token'); // the reference is kept ...
      for (const text of [row.specs, row.defs, row.logs]) expect(text).not.toContain(SECRET_VALUE); // ... the value never
    } finally {
      await pg.end();
    }
    expect(server.output()).not.toContain(SECRET_VALUE);
    expect(server.output()).not.toContain(JWT_SECRET);
  });

  it("shows a task none of the server's secrets, its database URL or tokens", async () => {
    const put = await api.putFlow(
      'demo',
      'printenv',
      'tasks:\n  - id: env\n    type: command\n    command: ["env"]\n',
    );
    expect(put.status).toBe(200);
    const id = await api.run('demo', 'printenv');
    const execution = await api.waitFor(id, ended);
    expect(execution.state).toBe('SUCCEEDED');
    const lines = (await api.logs(execution.taskRuns[0]!.id)).map((l) => l.line);
    const env = lines.join('\n');
    expect(env).toMatch(/^PATH=/m);
    expect(env).toMatch(/^SLUICE_OUTPUTS=/m);
    for (const forbidden of [
      db.url,
      'SLUICE_DATABASE_URL',
      'AUTH_JWT_SECRET',
      JWT_SECRET,
      'SLUICE_MASTER_KEYS',
      MASTER_KEY,
      'PIPELINE_EXECUTOR_API_TOKEN',
      'executor-token-5e8d1f',
      SERVER_ONLY,
      SECRET_VALUE,
    ]) {
      expect(env).not.toContain(forbidden);
    }
    // The only token a task may see is its own run token; check any JWT present belongs to this task run.
    for (const jwt of env.match(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g) ?? []) {
      const payload = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
      expect(payload.sub).toBe(execution.taskRuns[0]!.id);
    }
  });

  it('runs a subflow: the parent task waits for the child execution and gets its outputs', async () => {
    const child =
      'tasks:\n  - id: produce\n    type: command\n    command: ["sh", "-c", "echo answer=42 >> \\"$SLUICE_OUTPUTS\\""]\n';
    expect((await api.putFlow('demo', 'child', child)).status).toBe(200);
    const parent = [
      'tasks:',
      '  - id: call',
      '    type: subflow',
      '    flow: child',
      '  - id: use',
      '    type: command',
      '    command: ["echo", "child said {{ outputs.call.produce.answer }}"]',
      '    depends_on: [call]',
    ].join('\n');
    expect((await api.putFlow('demo', 'parent', parent)).status).toBe(200);
    const id = await api.run('demo', 'parent');
    const execution = await api.waitFor(id, ended, 30_000);
    expect(execution.state).toBe('SUCCEEDED');
    const call = execution.taskRuns.find((r) => r.taskId === 'call')!;
    expect(call.outputs).toMatchObject({ state: 'SUCCEEDED', 'produce.answer': '42' });
    const childExecution = await api.execution(String(call.outputs!.executionId));
    expect(childExecution.state).toBe('SUCCEEDED');
    const use = execution.taskRuns.find((r) => r.taskId === 'use')!;
    expect((await api.logs(use.id)).map((l) => l.line)).toContain('child said 42');
  });
});
