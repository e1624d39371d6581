import type request from 'supertest';
import type { ApiHarness } from './harness';
import {
  commitStream,
  connectionBody,
  connectionPath,
  finishSync,
  postConnection,
  putConnection,
  startSync,
} from './connection-fixtures';
import type { Caller } from './workspaces';

type Check = (
  method: string,
  route: string,
  call: request.Test,
  status: number,
  mediaType?: string,
) => Promise<request.Response>;

/** A success and the errors of every connection route, checked against the document (openapi-responses.test.ts). */
export async function checkConnectionRoutes(h: ApiHarness, check: Check, member: Caller): Promise<void> {
  const ns = 'openapi';
  const one = '/namespaces/{ns}/connections/{name}';
  await check('POST', one, postConnection(member, ns, 'doc', connectionBody()), 201);
  await check('POST', one, postConnection(member, ns, 'doc', connectionBody()), 409);
  await check('POST', one, postConnection(member, ns, 'bad', connectionBody({ schedule: 'x' })), 422);
  await check(
    'POST',
    one,
    member.post(connectionPath(ns, 'text')).set('Content-Type', 'text/plain').send('x'),
    400,
  );
  await check('PUT', one, putConnection(member, ns, 'doc', connectionBody({ schedule: '0 * * * *' })), 200);
  await check('PUT', one, putConnection(member, ns, 'doc', connectionBody({ streams: [] })), 422);
  await check('PUT', one, putConnection(member, ns, 'none', connectionBody()), 404);
  await check(
    'GET',
    '/namespaces/{ns}/connections',
    member.get(`/api/v1/namespaces/${ns}/connections?limit=1`),
    200,
  );
  await check(
    'GET',
    '/namespaces/{ns}/connections',
    member.get(`/api/v1/namespaces/${ns}/connections?limit=x`),
    400,
  );

  // With a sync running and committed rows: state, syncs and ledger have content.
  const run = await startSync(h, member, ns, 'doc');
  await commitStream(h, run, 1, { name: 'users', namespace: null }, 1, 2);
  await commitStream(h, run, 2, { name: 'orders', namespace: 'shop' }, 1, 2);
  await check('GET', one, member.get(connectionPath(ns, 'doc')), 200);
  await check('GET', one, member.get(connectionPath(ns, 'none')), 404);
  const ledger = `${one}/ledger`;
  await check('GET', ledger, member.get(connectionPath(ns, 'doc', '/ledger?limit=1')), 200);
  await check('GET', ledger, member.get(connectionPath(ns, 'doc', '/ledger?cursor=x')), 400);
  await check('GET', ledger, member.get(connectionPath(ns, 'none', '/ledger')), 404);
  const reset = `${one}/reset`;
  await check('POST', reset, member.post(connectionPath(ns, 'doc', '/reset')), 409);
  await check('DELETE', one, member.delete(connectionPath(ns, 'doc')), 409);
  await finishSync(h, run, 4);
  await check('GET', one, member.get(connectionPath(ns, 'doc')), 200);
  await check(
    'POST',
    reset,
    member.post(connectionPath(ns, 'doc', '/reset')).send({ streams: [{ name: 'users' }] }),
    200,
  );
  await check('POST', reset, member.post(connectionPath(ns, 'doc', '/reset')).send({ streams: [] }), 400);
  await check('POST', reset, member.post(connectionPath(ns, 'none', '/reset')), 404);
  // The flows API leaves a connection's flow alone.
  const flow = '/namespaces/{ns}/flows/{flow}';
  await check(
    'PUT',
    flow,
    member.putYaml(
      `/api/v1/namespaces/${ns}/flows/doc`,
      'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n',
    ),
    409,
  );
  await check('DELETE', flow, member.delete(`/api/v1/namespaces/${ns}/flows/doc`), 409);
  await check('DELETE', one, member.delete(connectionPath(ns, 'doc')), 204);
  await check('DELETE', one, member.delete(connectionPath(ns, 'doc')), 404);
}
