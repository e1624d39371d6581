import request from 'supertest';
import { buildOpenApiDocument, OPERATIONS } from '@sluice/api';
import { checkConnectionRoutes } from './connection-openapi';
import { startApiHarness, type ApiHarness } from './harness';
import { responseChecker } from './openapi-check';
import { A, NS, caller, flowYaml, seedWorkspaces, tokenOf, type Caller, type SeededA, B } from './workspaces';

// Every route's real responses — a success and an error each — match what
// GET /api/v1/openapi.json says of them, so the document cannot drift from
// the code (docs/api.md).

let h: ApiHarness;
let admin: Caller;
let member: Caller;
let seeded: SeededA;
const doc = buildOpenApiDocument() as Parameters<typeof responseChecker>[0];
const checker = responseChecker(doc);

beforeAll(async () => {
  h = await startApiHarness();
  admin = caller(h.publicApp, await tokenOf(A, 'admin'));
  member = caller(h.publicApp, await tokenOf(A, 'member'));
  seeded = await seedWorkspaces(h, admin, caller(h.publicApp, await tokenOf(B, 'admin')));
});
afterAll(() => h.close());

const v1 = (path: string) => `/api/v1${path}`;
const ns = (path: string) => v1(`/namespaces/${NS}${path}`);
const missing = '00000000-0000-4000-8000-000000000000';

/** Calls, checks the status, and checks the body against the document's schema for it. */
async function check(
  method: string,
  route: string,
  call: request.Test,
  status: number,
  mediaType?: string,
): Promise<request.Response> {
  const res = await call;
  expect({ route: `${method} ${route}`, status: res.status }).toEqual({
    route: `${method} ${route}`,
    status,
  });
  checker.expectMatches(method, route, res, mediaType);
  return res;
}

describe('every route answers what the OpenAPI document says', () => {
  it('the document itself', async () => {
    await check('GET', '/openapi.json', request(h.publicApp).get(v1('/openapi.json')), 200);
  });

  it('namespaces', async () => {
    const res = await check('GET', '/namespaces', member.get(v1('/namespaces')), 200);
    expect(res.body.namespaces).toEqual([{ name: NS }]);
    await check('GET', '/namespaces', request(h.publicApp).get(v1('/namespaces')), 401);
    await check('GET', '/namespaces', member.get(v1('/namespaces?cursor=nope')), 400);
  });

  it('flows', async () => {
    await check(
      'PUT',
      '/namespaces/{ns}/flows/{flow}',
      member.putYaml(ns('/flows/spec'), flowYaml('x')),
      200,
    );
    const invalid = 'tasks:\n  - id: a\n    type: comand\n';
    const res = await check(
      'PUT',
      '/namespaces/{ns}/flows/{flow}',
      member.putYaml(ns('/flows/spec'), invalid),
      422,
    );
    expect(res.body.errors[0].code).toBe('unknown_task_type');
    await check('PUT', '/namespaces/{ns}/flows/{flow}', member.putYaml(ns('/flows/spec'), ' '), 400);
    await check('GET', '/namespaces/{ns}/flows', member.get(ns('/flows?limit=2')), 200);
    await check('GET', '/namespaces/{ns}/flows', member.get(ns('/flows?limit=0')), 400);
    await check('GET', '/namespaces/{ns}/flows', member.get(v1('/namespaces/a..b/flows')), 400);
    await check('GET', '/namespaces/{ns}/flows/{flow}', member.get(ns('/flows/spec')), 200);
    await check('GET', '/namespaces/{ns}/flows/{flow}', member.get(ns('/flows/nope')), 404);
    await check('DELETE', '/namespaces/{ns}/flows/{flow}', member.delete(ns('/flows/spec')), 204);
    await check('DELETE', '/namespaces/{ns}/flows/{flow}', member.delete(ns('/flows/spec')), 404);
  });

  it('namespace validation', async () => {
    const route = '/namespaces/{ns}/validate';
    const flows = [
      { id: 'good', source: flowYaml('x') },
      { id: 'bad', source: 'tasks:\n  - id: a\n    type: comand\n' },
    ];
    const res = await check('POST', route, member.post(ns('/validate')).send({ flows }), 200);
    expect(res.body.valid).toBe(false);
    expect(res.body.flows[1].errors[0].code).toBe('unknown_task_type');
    const broken = { namespaceYaml: 'defaults: [1', flows: [] };
    const ofYaml = await check('POST', route, member.post(ns('/validate')).send(broken), 200);
    expect(ofYaml.body.namespaceYaml.length).toBeGreaterThan(0);
    await check('POST', route, member.post(ns('/validate')).send({ flow: [] }), 400);
    await check('GET', '/namespaces/{ns}/flows/{flow}', member.get(ns('/flows/bad')), 404);
  });

  it('executions', async () => {
    const route = '/namespaces/{ns}/flows/{flow}/executions';
    const created = await check('POST', route, member.post(ns('/flows/shared/executions')), 201);
    await check('POST', route, member.post(ns('/flows/nope/executions')), 404);
    const refused = await check(
      'POST',
      route,
      member.post(ns('/flows/shared/executions')).send({ inputs: { x: 1 } }),
      422,
    );
    expect(refused.body.errors[0].code).toBe('unknown_input');
    await check('POST', route, member.post(ns('/flows/shared/executions')).send({ inputs: 'x' }), 400);
    const id = String(created.body.id);
    await check('GET', '/executions', member.get(v1(`/executions?namespace=${NS}&limit=1`)), 200);
    await check('GET', '/executions', member.get(v1('/executions?cursor=abc')), 400);
    await check('GET', '/executions', member.get(v1('/executions?flow=shared')), 400);
    await check('GET', '/executions', member.get(v1('/executions?status=FAILED')), 400);
    await check('GET', '/executions/{id}', member.get(v1(`/executions/${seeded.doneExecutionId}`)), 200);
    await check('GET', '/executions/{id}', member.get(v1(`/executions/${missing}`)), 404);
    await check('GET', '/executions/{id}/task-runs', member.get(v1(`/executions/${id}/task-runs`)), 200);
    await check('GET', '/executions/{id}/task-runs', member.get(v1(`/executions/${missing}/task-runs`)), 404);
    await check('POST', '/executions/{id}/cancel', member.post(v1(`/executions/${id}/cancel`)), 202);
    await check('POST', '/executions/{id}/cancel', member.post(v1(`/executions/${missing}/cancel`)), 404);
  });

  it('task runs: logs, artifacts', async () => {
    const run = seeded.doneTaskRunId;
    await check('GET', '/task-runs/{id}/logs', member.get(v1(`/task-runs/${run}/logs`)), 200);
    await check(
      'GET',
      '/task-runs/{id}/logs',
      member.get(v1(`/task-runs/${run}/logs?follow=true`)).buffer(true),
      200,
      'application/x-ndjson',
    );
    await check('GET', '/task-runs/{id}/logs', member.get(v1(`/task-runs/${run}/logs?after=-1`)), 400);
    await check('GET', '/task-runs/{id}/logs', member.get(v1(`/task-runs/${missing}/logs`)), 404);
    await check('GET', '/task-runs/{id}/metrics', member.get(v1(`/task-runs/${run}/metrics`)), 200);
    await check('GET', '/task-runs/{id}/metrics', member.get(v1(`/task-runs/${missing}/metrics`)), 404);
    await check('GET', '/task-runs/{id}/artifacts', member.get(v1(`/task-runs/${run}/artifacts`)), 200);
    await check('GET', '/task-runs/{id}/artifacts', member.get(v1(`/task-runs/${missing}/artifacts`)), 404);
    const artifact = (id: string, name: string) => member.get(v1(`/task-runs/${id}/artifacts/${name}`));
    await check(
      'GET',
      '/task-runs/{id}/artifacts/{name}',
      artifact(run, seeded.artifactName),
      200,
      'application/octet-stream',
    );
    await check('GET', '/task-runs/{id}/artifacts/{name}', artifact(run, 'nope.txt'), 404);
  });

  it('files', async () => {
    const route = '/namespaces/{ns}/files/{path}';
    await check('PUT', route, member.putFile(ns('/files/dir/spec.txt'), 'x'), 200);
    await check('PUT', route, member.putFile(ns('/files/namespace.yaml'), 'defaults: [1'), 422);
    await check(
      'PUT',
      route,
      member.putFile(ns('/files/namespace.yaml'), 'allowed_executors: [process]\n'),
      403,
    );
    await check('GET', '/namespaces/{ns}/files', member.get(ns('/files?limit=1')), 200);
    await check('GET', '/namespaces/{ns}/files', member.get(ns('/files?cursor=%7B')), 400);
    await check('GET', route, member.get(ns('/files/dir/spec.txt')), 200, 'application/octet-stream');
    await check('GET', route, member.get(ns('/files/nope.txt')), 404);
    await check('DELETE', route, member.delete(ns('/files/dir/spec.txt')), 204);
    await check('DELETE', route, member.delete(ns('/files/dir/spec.txt')), 404);
  });

  it('secrets', async () => {
    const route = '/namespaces/{ns}/secrets/{name}';
    await check('PUT', route, admin.putSecret(ns('/secrets/spec'), 'v'), 204);
    await check('PUT', route, admin.put(ns('/secrets/spec')).send({ value: '' }), 400);
    await check('PUT', route, member.putSecret(ns('/secrets/spec'), 'v'), 403);
    await check('GET', '/namespaces/{ns}/secrets', admin.get(ns('/secrets')), 200);
    await check('GET', '/namespaces/{ns}/secrets', member.get(ns('/secrets')), 403);
    await check('DELETE', route, admin.delete(ns('/secrets/spec')), 204);
    await check('DELETE', route, admin.delete(ns('/secrets/spec')), 404);
  });

  it('connections', async () => {
    await checkConnectionRoutes(h, check, member);
  });

  it('executors and instances', async () => {
    await check('GET', '/executors', member.get(v1('/executors')), 200);
    await check('GET', '/executors', request(h.publicApp).get(v1('/executors')), 401);
    await check('GET', '/instances', admin.get(v1('/instances')), 200);
    await check('GET', '/instances', member.get(v1('/instances')), 403);
  });

  it('would catch a body the document does not describe', () => {
    const fake = (body: unknown, status = 200) =>
      ({
        status,
        body,
        text: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      }) as never;
    const probe = responseChecker(doc);
    probe.expectMatches('GET', '/executors', fake({ executors: [] }));
    expect(() => probe.expectMatches('GET', '/executors', fake({ executors: [{ id: 1 }] }))).toThrow();
    expect(() => probe.expectMatches('GET', '/executors', fake({ executors: [], extra: true }))).toThrow();
    expect(() =>
      probe.expectMatches('GET', '/executors', fake({ error: { code: 'no_such_code', message: '' } }, 401)),
    ).toThrow();
    expect(() => probe.expectMatches('GET', '/executors', fake({}, 418))).toThrow(/does not list/);
  });

  it('checked a success and an error of every route', () => {
    for (const op of OPERATIONS) {
      const route = `${op.method.toUpperCase()} ${op.path}`;
      const statuses = [...checker.checked]
        .filter((c) => c.startsWith(`${route} `))
        .map((c) => Number(c.split(' ')[2]));
      expect({ route, success: statuses.some((s) => s < 300) }).toEqual({ route, success: true });
      // The document can only answer 200.
      if (op.path !== '/openapi.json')
        expect({ route, error: statuses.some((s) => s >= 400) }).toEqual({ route, error: true });
    }
  });
});
