import { randomUUID } from 'node:crypto';
import type request from 'supertest';
import { CONNECTIONS_OF_A, connectionMatrix, seedConnections } from './connection-isolation';
import { startApiHarness, type ApiHarness } from './harness';
import {
  A,
  B,
  NS,
  caller,
  flowYaml,
  listRoutes,
  seedWorkspaces,
  tokenOf,
  workspaceRows,
  type Caller,
  type SeededA,
} from './workspaces';

// The isolation matrix (docs/decisions.md §12): for every route of the public
// API, a token of workspace B reaches none of workspace A's objects — by id
// it gets the 404 of a missing object, by name it gets B's own namespace of
// that name — and no row of A changes. The routes are read from the router:
// a route without an entry here fails the test.

let h: ApiHarness;
let a: Caller;
let aMember: Caller;
let b: Caller;
let bMember: Caller;
let seeded: SeededA;

beforeAll(async () => {
  h = await startApiHarness();
  a = caller(h.publicApp, await tokenOf(A, 'admin'));
  aMember = caller(h.publicApp, await tokenOf(A, 'member'));
  b = caller(h.publicApp, await tokenOf(B, 'admin'));
  bMember = caller(h.publicApp, await tokenOf(B, 'member'));
  seeded = await seedWorkspaces(h, a, b);
  await seedConnections(a, b);
});
afterAll(() => h.close());

const v1 = (path: string) => `/api/v1${path}`;
const ns = (path: string) => v1(`/namespaces/${NS}${path}`);

/** B's call for A's `id` answers byte for byte what a call for an id nobody has answers. */
async function expectSameAsMissing(call: (id: string) => request.Test, id: string): Promise<void> {
  const nobody = randomUUID();
  const res = await call(id);
  const missing = await call(nobody);
  expect(res.status).toBe(404);
  expect(missing.status).toBe(404);
  expect(res.headers['content-type']).toBe(missing.headers['content-type']);
  expect(JSON.stringify(res.body)).toBe(JSON.stringify(missing.body).split(nobody).join(id));
}

const names = (list: unknown, key: string) => (list as Array<Record<string, unknown>>).map((x) => x[key]);

const MATRIX: Record<string, () => Promise<void>> = {
  // The API's description: the same document for everyone, with or without a token.
  'GET /api/v1/openapi.json': async () => {
    const ofB = await bMember.get(v1('/openapi.json'));
    expect(ofB.status).toBe(200);
    expect(ofB.body).toEqual((await aMember.get(v1('/openapi.json'))).body);
    expect(JSON.stringify(ofB.body)).not.toMatch(/only-a|from-a/);
  },
  'GET /api/v1/namespaces': async () => {
    // B has its own `etl`; A's namespaces are not listed as B's, and A's only-A namespace never appears.
    expect((await a.putYaml(v1('/namespaces/a-only-ns/flows/x'), flowYaml('from-a'))).status).toBe(200);
    const ofB = await bMember.get(v1('/namespaces'));
    expect(ofB.status).toBe(200);
    expect(names(ofB.body.namespaces, 'name')).toEqual([NS]);
    expect(names((await aMember.get(v1('/namespaces'))).body.namespaces, 'name')).toEqual(['a-only-ns', NS]);
    expect((await a.delete(v1('/namespaces/a-only-ns/flows/x'))).status).toBe(204);
  },
  'GET /api/v1/executions': async () => {
    const all = async (who: Caller, query: string) => {
      const ids: string[] = [];
      let cursor = '';
      for (;;) {
        const res = await who.get(v1(`/executions?limit=1${query}${cursor ? `&cursor=${cursor}` : ''}`));
        expect(res.status).toBe(200);
        ids.push(...(names(res.body.executions, 'id') as string[]));
        if (res.body.nextCursor === null) return ids;
        cursor = String(res.body.nextCursor);
      }
    };
    const ofA = [seeded.doneExecutionId, seeded.runningExecutionId];
    for (const query of ['', `&namespace=${NS}`, `&namespace=${NS}&flow=shared`, '&state=SUCCEEDED'])
      for (const id of await all(bMember, query)) expect(ofA).not.toContain(id);
    expect((await all(aMember, '')).sort()).toEqual(expect.arrayContaining(ofA));
    // A's cursor given to B continues B's own list: it names a position, not A's objects.
    const first = await aMember.get(v1('/executions?limit=1'));
    const rest = await bMember.get(v1(`/executions?cursor=${String(first.body.nextCursor)}`));
    expect(rest.status).toBe(200);
    for (const e of rest.body.executions as Array<{ workspace: string }>) expect(e.workspace).toBe(B);
  },
  'GET /api/v1/executions/:id/task-runs': async () => {
    await expectSameAsMissing((id) => b.get(v1(`/executions/${id}/task-runs`)), seeded.doneExecutionId);
    await expectSameAsMissing(
      (id) => bMember.get(v1(`/executions/${id}/task-runs`)),
      seeded.runningExecutionId,
    );
    expect(
      names((await aMember.get(v1(`/executions/${seeded.doneExecutionId}/task-runs`))).body.taskRuns, 'id'),
    ).toEqual([seeded.doneTaskRunId]);
  },
  'PUT /api/v1/namespaces/:ns/flows/:flow': async () => {
    // A member of B writes B's own flow of that name; A's is untouched.
    expect((await bMember.putYaml(ns('/flows/shared'), flowYaml('from-b-again'))).status).toBe(200);
    expect((await b.get(ns('/flows/shared'))).body.source).toContain('from-b-again');
    expect((await a.get(ns('/flows/shared'))).body.source).toContain('from-a');
  },
  'GET /api/v1/namespaces/:ns/flows': async () => {
    const res = await bMember.get(ns('/flows'));
    expect(res.status).toBe(200);
    expect(names(res.body.flows, 'id')).toContain('shared');
    expect(names(res.body.flows, 'id')).not.toContain('only-a');
  },
  'GET /api/v1/namespaces/:ns/flows/:flow': async () => {
    expect((await bMember.get(ns('/flows/only-a'))).status).toBe(404);
    const own = await bMember.get(ns('/flows/shared'));
    expect(own.status).toBe(200);
    expect(own.body.source).toContain('from-b');
    expect(JSON.stringify(own.body)).not.toContain('from-a');
  },
  'DELETE /api/v1/namespaces/:ns/flows/:flow': async () => {
    expect((await b.delete(ns('/flows/only-a'))).status).toBe(404);
    expect((await bMember.delete(ns('/flows/dup'))).status).toBe(204);
    expect((await b.get(ns('/flows/dup'))).status).toBe(404);
    expect((await a.get(ns('/flows/dup'))).status).toBe(200);
  },
  'POST /api/v1/namespaces/:ns/validate': async () => {
    // The stored namespace.yaml the flows are checked against is the caller's own namespace's.
    const path = v1('/namespaces/val-only-a/files/namespace.yaml');
    expect((await a.putFile(path, 'allowed_executors: [docker]\n')).status).toBe(200);
    const body = { flows: [{ id: 'x', source: flowYaml('from-b') }] };
    const ofA = await aMember.post(v1('/namespaces/val-only-a/validate')).send(body);
    expect(ofA.body.flows[0].errors.map((e: { code: string }) => e.code)).toContain(
      'executor_type_not_allowed',
    );
    const ofB = await bMember.post(v1('/namespaces/val-only-a/validate')).send(body);
    expect(ofB.status).toBe(200);
    expect(ofB.body).toEqual({ valid: true, namespaceYaml: [], flows: [{ id: 'x', errors: [] }] });
    expect((await b.get(v1('/namespaces/val-only-a/flows/x'))).status).toBe(404);
    expect((await a.delete(path)).status).toBe(204);
  },
  'POST /api/v1/namespaces/:ns/flows/:flow/executions': async () => {
    expect((await b.post(ns('/flows/only-a/executions'))).status).toBe(404);
    const created = await bMember.post(ns('/flows/shared/executions'));
    expect(created.status).toBe(201);
    const id = String(created.body.id);
    expect((await b.get(v1(`/executions/${id}`))).body).toMatchObject({
      workspace: B,
      namespace: NS,
      flowId: 'shared',
    });
    // The other way round too: A cannot see B's execution.
    await expectSameAsMissing((x) => a.get(v1(`/executions/${x}`)), id);
  },
  'GET /api/v1/executions/:id': async () => {
    await expectSameAsMissing((id) => b.get(v1(`/executions/${id}`)), seeded.doneExecutionId);
    await expectSameAsMissing((id) => bMember.get(v1(`/executions/${id}`)), seeded.runningExecutionId);
  },
  'POST /api/v1/executions/:id/cancel': async () => {
    await expectSameAsMissing((id) => b.post(v1(`/executions/${id}/cancel`)), seeded.runningExecutionId);
    expect((await aMember.get(v1(`/executions/${seeded.runningExecutionId}`))).body).toMatchObject({
      state: 'RUNNING',
      cancelRequested: false,
    });
  },
  'GET /api/v1/task-runs/:id/logs': async () => {
    await expectSameAsMissing((id) => b.get(v1(`/task-runs/${id}/logs`)), seeded.doneTaskRunId);
    await expectSameAsMissing((id) => b.get(v1(`/task-runs/${id}/logs?follow=true`)), seeded.doneTaskRunId);
    await expectSameAsMissing((id) => bMember.get(v1(`/task-runs/${id}/logs`)), seeded.runningTaskRunId);
    // A reads its own.
    expect(
      names((await aMember.get(v1(`/task-runs/${seeded.doneTaskRunId}/logs`))).body.lines, 'line'),
    ).toEqual(['from-a log line']);
  },
  'GET /api/v1/task-runs/:id/metrics': async () => {
    await expectSameAsMissing((id) => b.get(v1(`/task-runs/${id}/metrics`)), seeded.doneTaskRunId);
    expect((await a.get(v1(`/task-runs/${seeded.doneTaskRunId}/metrics`))).status).toBe(200);
  },
  'GET /api/v1/task-runs/:id/artifacts': async () => {
    await expectSameAsMissing((id) => b.get(v1(`/task-runs/${id}/artifacts`)), seeded.doneTaskRunId);
    expect((await a.get(v1(`/task-runs/${seeded.doneTaskRunId}/artifacts`))).status).toBe(200);
  },
  'GET /api/v1/task-runs/:id/artifacts/*name': async () => {
    const path = (id: string) => v1(`/task-runs/${id}/artifacts/${seeded.artifactName}`);
    await expectSameAsMissing((id) => b.get(path(id)), seeded.doneTaskRunId);
    const own = await a.get(path(seeded.doneTaskRunId));
    expect(own.status).toBe(200);
    expect(Buffer.from(own.body as Buffer).toString()).toBe('from-a artifact');
  },
  'PUT /api/v1/namespaces/:ns/files/*path': async () => {
    expect((await bMember.putFile(ns('/files/shared.txt'), 'from-b-again')).status).toBe(200);
    expect((await bMember.putFile(ns('/files/only-a.txt'), 'from-b-new')).status).toBe(200);
    expect(Buffer.from((await a.get(ns('/files/only-a.txt'))).body as Buffer).toString()).toBe('from-a');
    expect((await bMember.delete(ns('/files/only-a.txt'))).status).toBe(204);
  },
  'GET /api/v1/namespaces/:ns/files': async () => {
    const res = await bMember.get(ns('/files'));
    expect(res.status).toBe(200);
    const paths = names(res.body.files, 'path');
    expect(paths).toContain('shared.txt');
    expect(paths).not.toContain('only-a.txt');
    // Every file listed is B's own.
    for (const path of paths) {
      const file = await bMember.get(ns(`/files/${String(path)}`));
      expect(Buffer.from(file.body as Buffer).toString()).toMatch(/^from-b/);
    }
  },
  'GET /api/v1/namespaces/:ns/files/*path': async () => {
    const own = await bMember.get(ns('/files/shared.txt'));
    expect(own.status).toBe(200);
    expect(Buffer.from(own.body as Buffer).toString()).toMatch(/^from-b/);
    expect((await bMember.get(ns('/files/never.txt'))).status).toBe(404);
  },
  'DELETE /api/v1/namespaces/:ns/files/*path': async () => {
    expect((await bMember.delete(ns('/files/dup.txt'))).status).toBe(204);
    expect((await b.delete(ns('/files/dup.txt'))).status).toBe(404);
    expect((await a.get(ns('/files/dup.txt'))).status).toBe(200);
  },
  'PUT /api/v1/namespaces/:ns/secrets/:name': async () => {
    expect((await bMember.putSecret(ns('/secrets/shared'), 'nope')).status).toBe(403);
    expect(await b.putSecret(ns('/secrets/shared'), 'from-b-again')).toMatchObject({ status: 204 });
    expect(await b.putSecret(ns('/secrets/only-a'), 'from-b-new')).toMatchObject({ status: 204 });
    expect((await b.delete(ns('/secrets/only-a'))).status).toBe(204);
  },
  'DELETE /api/v1/namespaces/:ns/secrets/:name': async () => {
    expect((await bMember.delete(ns('/secrets/dup'))).status).toBe(403);
    expect((await b.delete(ns('/secrets/dup'))).status).toBe(204);
    expect((await b.delete(ns('/secrets/dup'))).status).toBe(404);
    expect(names((await a.get(ns('/secrets'))).body.secrets, 'name')).toContain('dup');
  },
  'GET /api/v1/namespaces/:ns/secrets': async () => {
    expect((await bMember.get(ns('/secrets'))).status).toBe(403);
    const res = await b.get(ns('/secrets'));
    expect(res.status).toBe(200);
    expect(names(res.body.secrets, 'name')).toContain('shared');
    expect(names(res.body.secrets, 'name')).not.toContain('only-a');
    expect(names((await a.get(ns('/secrets'))).body.secrets, 'name')).toEqual(['dup', 'only-a', 'shared']);
  },
  // Installation-wide by design: every workspace sees the same executors and (admins) instances.
  'GET /api/v1/executors': async () => {
    const ofB = await bMember.get(v1('/executors'));
    expect(ofB.status).toBe(200);
    expect(names(ofB.body.executors, 'id')).toEqual(['shared-instance']);
    expect(ofB.body).toEqual((await aMember.get(v1('/executors'))).body);
  },
  'GET /api/v1/instances': async () => {
    expect((await bMember.get(v1('/instances'))).status).toBe(403);
    const ofB = await b.get(v1('/instances'));
    expect(ofB.status).toBe(200);
    expect(names(ofB.body.instances, 'id')).toEqual(['shared-instance']);
  },
  ...connectionMatrix(() => ({ a, b, bMember })),
};

describe('workspace isolation matrix', () => {
  const routes = () => listRoutes(h.publicApp).filter((r) => r.split(' ')[1]!.startsWith('/api/v1/'));

  it('covers every public route, and only real ones', () => {
    expect(routes().length).toBeGreaterThan(10);
    expect(Object.keys(MATRIX).sort()).toEqual(routes());
  });

  // Listed from the matrix so each route is its own test; the test above ties the two lists together.
  it.each(Object.keys(MATRIX).sort())(
    '%s: B reaches nothing of A, and nothing of A changes',
    async (route) => {
      const before = await workspaceRows(h.pool, A);
      await MATRIX[route]!();
      expect(await workspaceRows(h.pool, A)).toEqual(before);
    },
  );

  it('A kept everything it stored', async () => {
    const rows = await workspaceRows(h.pool, A);
    // Its three flows and the flows of its connections.
    expect((rows.flows as unknown[]).length).toBe(3 + CONNECTIONS_OF_A.length);
    expect((rows.namespace_files as unknown[]).length).toBe(3);
    expect((rows.secrets as unknown[]).length).toBe(3);
    expect((rows.executions as unknown[]).length).toBe(2);
    for (const table of ['task_run_logs', 'task_run_outputs', 'task_run_metrics', 'artifacts'])
      expect({ table, n: (rows[table] as unknown[]).length }).toEqual({ table, n: 1 });
  });
});
