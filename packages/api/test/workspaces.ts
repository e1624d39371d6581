import request from 'supertest';
import type { Express } from 'express';
import type { Pool } from 'pg';
import { createUserToken, type Role } from '@sluice/auth';
import { FENCE_HEADER, runnerPaths } from '@sluice/protocol';
import { registerInstance } from '@sluice/store';
import { claimWithToken, JWT_SECRET, WORKSPACE, type ApiHarness } from './harness';

/** Workspace A (the harness's own tokens) and B, each with an `etl` namespace. */
export const A = WORKSPACE;
export const B = 'ws-b';
export const NS = 'etl';

export const tokenOf = (workspace: string, role: Role) =>
  createUserToken(JWT_SECRET, { user: `${role}-of-${workspace}`, workspace, role });

export const flowYaml = (marker: string) =>
  ['tasks:', '  - id: a', '    type: command', `    command: ["echo", "${marker}"]`, ''].join('\n');

/** An HTTP call of the public API as one token. */
export function caller(app: Express, token: string) {
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${token}`);
  return {
    get: (path: string) => auth(request(app).get(path)),
    delete: (path: string) => auth(request(app).delete(path)),
    post: (path: string) => auth(request(app).post(path)),
    put: (path: string) => auth(request(app).put(path)),
    putYaml: (path: string, yaml: string) =>
      auth(request(app).put(path)).set('Content-Type', 'application/yaml').send(yaml),
    putFile: (path: string, content: string) =>
      auth(request(app).put(path)).set('Content-Type', 'application/octet-stream').send(Buffer.from(content)),
    putSecret: (path: string, value: string) => auth(request(app).put(path)).send({ value }),
  };
}
export type Caller = ReturnType<typeof caller>;

const v1 = (path: string) => `/api/v1${path}`;

/** What workspace A holds: reached by B only through the routes under test. */
export interface SeededA {
  /** Ended SUCCEEDED, with logs, outputs, a metric and an artifact. */
  doneExecutionId: string;
  doneTaskRunId: string;
  artifactName: string;
  /** RUNNING with a queued task run: what a cancel would change. */
  runningExecutionId: string;
  runningTaskRunId: string;
}

/**
 * Both workspaces get flows, files and secrets named `shared` and `dup` in
 * `etl` (each with its own content); only A has `only-a`. A also gets two
 * executions, one finished with everything a runner writes.
 */
export async function seedWorkspaces(h: ApiHarness, a: Caller, b: Caller): Promise<SeededA> {
  for (const [who, marker] of [
    [a, 'from-a'],
    [b, 'from-b'],
  ] as const) {
    for (const flow of ['shared', 'dup'])
      expect((await who.putYaml(v1(`/namespaces/${NS}/flows/${flow}`), flowYaml(marker))).status).toBe(200);
    for (const file of ['shared.txt', 'dup.txt'])
      expect((await who.putFile(v1(`/namespaces/${NS}/files/${file}`), marker)).status).toBe(200);
    for (const secret of ['shared', 'dup'])
      expect(
        (await who.putSecret(v1(`/namespaces/${NS}/secrets/${secret}`), `${marker}-secret`)).status,
      ).toBe(204);
  }
  expect((await a.putYaml(v1(`/namespaces/${NS}/flows/only-a`), flowYaml('from-a'))).status).toBe(200);
  expect((await a.putFile(v1(`/namespaces/${NS}/files/only-a.txt`), 'from-a')).status).toBe(200);
  expect((await a.putSecret(v1(`/namespaces/${NS}/secrets/only-a`), 'from-a-secret')).status).toBe(204);
  await registerInstance(h.pool, {
    instanceId: 'shared-instance',
    type: 'docker-executor',
    version: '0.1.0',
    capacity: { process: 2 },
    pools: ['default'],
    executors: ['process', 'inline'],
    resourceDefaults: {},
  });

  const done = await a.post(v1(`/namespaces/${NS}/flows/shared/executions`));
  expect(done.status).toBe(201);
  const [claimed] = await claimWithToken(h);
  if (!claimed) throw new Error('expected the task run of A to be claimed');
  const { row, token } = claimed;
  const runner = (r: request.Test) => r.set('Authorization', `Bearer ${token}`);
  const ts = new Date().toISOString();
  const artifactName = 'report.txt';
  const calls = [
    runner(request(h.internalApp).post(runnerPaths.started(row.id))).send({ fence: row.fence }),
    runner(request(h.internalApp).post(runnerPaths.logs(row.id))).send({
      fence: row.fence,
      lines: [{ seq: 1, stream: 'stdout', line: 'from-a log line', ts }],
    }),
    runner(request(h.internalApp).post(runnerPaths.outputs(row.id))).send({
      fence: row.fence,
      outputs: { answer: 'from-a output' },
    }),
    runner(request(h.internalApp).post(runnerPaths.metrics(row.id))).send({
      fence: row.fence,
      metrics: [{ name: 'rows', value: 3, tags: {} }],
    }),
    runner(request(h.internalApp).put(runnerPaths.artifact(row.id, artifactName)))
      .set(FENCE_HEADER, String(row.fence))
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('from-a artifact')),
    runner(request(h.internalApp).post(runnerPaths.result(row.id))).send({ fence: row.fence, exitCode: 0 }),
  ];
  for (const call of calls) expect((await call).status).toBe(200);
  await h.engine.processPendingEvents();

  const running = await a.post(v1(`/namespaces/${NS}/flows/only-a/executions`));
  expect(running.status).toBe(201);
  const view = await a.get(v1(`/executions/${String(running.body.id)}`));
  expect(view.body).toMatchObject({ state: 'RUNNING', taskRuns: [{ state: 'QUEUED' }] });
  const doneView = await a.get(v1(`/executions/${String(done.body.id)}`));
  expect(doneView.body).toMatchObject({ state: 'SUCCEEDED' });
  return {
    doneExecutionId: String(done.body.id),
    doneTaskRunId: row.id,
    artifactName,
    runningExecutionId: String(running.body.id),
    runningTaskRunId: String((view.body as { taskRuns: Array<{ id: string }> }).taskRuns[0]!.id),
  };
}

/**
 * Every row of `workspace`: its namespaces' flows, files and secrets, its
 * executions and everything of their task runs, the snapshots they pin, and
 * the sync state and commit ledger of its connections.
 */
export async function workspaceRows(pool: Pool, workspace: string): Promise<Record<string, unknown>> {
  const ofExecutions = 'SELECT id FROM executions WHERE workspace = $1';
  const ofTaskRuns = `SELECT id FROM task_runs WHERE execution_id IN (${ofExecutions})`;
  const queries: Record<string, string> = {
    flows: 'SELECT * FROM flows WHERE workspace = $1 ORDER BY namespace, flow_id',
    namespace_files: 'SELECT * FROM namespace_files WHERE workspace = $1 ORDER BY namespace, path',
    secrets: 'SELECT * FROM secrets WHERE workspace = $1 ORDER BY namespace, name',
    executions: 'SELECT * FROM executions WHERE workspace = $1 ORDER BY id',
    task_runs: `SELECT * FROM task_runs WHERE execution_id IN (${ofExecutions}) ORDER BY id`,
    task_run_logs: `SELECT * FROM task_run_logs WHERE task_run_id IN (${ofTaskRuns}) ORDER BY task_run_id, seq`,
    task_run_outputs: `SELECT * FROM task_run_outputs WHERE task_run_id IN (${ofTaskRuns}) ORDER BY task_run_id, key`,
    task_run_metrics: `SELECT * FROM task_run_metrics WHERE task_run_id IN (${ofTaskRuns}) ORDER BY id`,
    artifacts: `SELECT * FROM artifacts WHERE task_run_id IN (${ofTaskRuns}) ORDER BY task_run_id, name`,
    sync_states:
      'SELECT * FROM sync_states WHERE workspace = $1 ORDER BY namespace, flow_id, task_id, stream_namespace, stream_name',
    sync_commits: 'SELECT * FROM sync_commits WHERE workspace = $1 ORDER BY id',
    snapshots: `SELECT id, size FROM snapshots
                WHERE id IN (SELECT snapshot_id FROM executions WHERE workspace = $1) ORDER BY id`,
  };
  const out: Record<string, unknown> = {};
  for (const [table, sql] of Object.entries(queries)) {
    const { rows } = await pool.query<{ row: unknown }>(`SELECT to_jsonb(t) AS row FROM (${sql}) t`, [
      workspace,
    ]);
    out[table] = rows.map((r) => r.row);
  }
  return out;
}

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: RouterLayer[] };
  rawPath?: unknown;
}

/**
 * Every route of an express app as "METHOD /path", read from its router's
 * layers (mounted routers included), so a route added later is listed too.
 */
export function listRoutes(app: Express): string[] {
  const walk = (stack: RouterLayer[], prefix: string): string[] =>
    stack.flatMap((layer) => {
      if (layer.route) {
        const path = `${prefix}${layer.route.path}`;
        return Object.keys(layer.route.methods)
          .filter((m) => m !== '_all')
          .map((m) => `${m.toUpperCase()} ${path}`);
      }
      if (!layer.handle.stack) return [];
      if (typeof layer.rawPath !== 'string')
        throw new Error(`a router is mounted on a path this walker cannot read: ${String(layer.rawPath)}`);
      return walk(layer.handle.stack, layer.rawPath === '/' ? prefix : `${prefix}${layer.rawPath}`);
    });
  const router = (app as unknown as { router: { stack: RouterLayer[] } }).router;
  return [...new Set(walk(router.stack, ''))].sort();
}
