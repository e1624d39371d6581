import type request from 'supertest';
import { connectionBody, connectionPath, postConnection, putConnection } from './connection-fixtures';
import { NS, type Caller } from './workspaces';

/*
 * The connection routes of the isolation matrix (workspace-isolation.test.ts):
 * A and B each hold `shared-conn` and `dup-conn` in `etl`, told apart by
 * their schedules; only A holds `only-a-conn`. A connection of A is, for B,
 * the 404 of a connection nobody has, byte for byte.
 */

export const CONNECTIONS_OF_A = ['dup-conn', 'only-a-conn', 'shared-conn'];
const SCHEDULE = { a: '0 1 * * *', b: '0 2 * * *' };
const NOBODY = 'nobody-conn';

export async function seedConnections(a: Caller, b: Caller): Promise<void> {
  for (const name of CONNECTIONS_OF_A)
    expect((await postConnection(a, NS, name, connectionBody({ schedule: SCHEDULE.a }))).status).toBe(201);
  for (const name of ['dup-conn', 'shared-conn'])
    expect((await postConnection(b, NS, name, connectionBody({ schedule: SCHEDULE.b }))).status).toBe(201);
}

/** B's call for A's connection answers what a call for a connection nobody has answers. */
async function sameAsMissing(call: (name: string) => request.Test, name: string): Promise<void> {
  const res = await call(name);
  const missing = await call(NOBODY);
  expect(res.status).toBe(404);
  expect(missing.status).toBe(404);
  expect(JSON.stringify(res.body)).toBe(JSON.stringify(missing.body).split(NOBODY).join(name));
}

const schedule = async (who: Caller, name: string) =>
  ((await who.get(connectionPath(NS, name))).body as { schedule?: string }).schedule;

export function connectionMatrix(
  callers: () => { a: Caller; b: Caller; bMember: Caller },
): Record<string, () => Promise<void>> {
  const path = (name: string, rest = '') => connectionPath(NS, name, rest);
  return {
    'POST /api/v1/namespaces/:ns/connections/:name': async () => {
      const { a, bMember } = callers();
      // B creates its own connection of A's name; A's stays A's.
      expect(
        (await postConnection(bMember, NS, 'only-a-conn', connectionBody({ schedule: SCHEDULE.b }))).status,
      ).toBe(201);
      expect(await schedule(bMember, 'only-a-conn')).toBe(SCHEDULE.b);
      expect(await schedule(a, 'only-a-conn')).toBe(SCHEDULE.a);
      expect((await bMember.delete(path('only-a-conn'))).status).toBe(204);
      // B's own `shared-conn` exists: a conflict with B's, not with A's.
      expect((await postConnection(bMember, NS, 'shared-conn', connectionBody())).status).toBe(409);
    },
    'PUT /api/v1/namespaces/:ns/connections/:name': async () => {
      const { a, bMember } = callers();
      await sameAsMissing((name) => putConnection(bMember, NS, name, connectionBody()), 'only-a-conn');
      const own = await putConnection(bMember, NS, 'shared-conn', connectionBody({ schedule: SCHEDULE.b }));
      expect(own.status).toBe(200);
      expect(await schedule(a, 'shared-conn')).toBe(SCHEDULE.a);
    },
    'GET /api/v1/namespaces/:ns/connections/:name': async () => {
      const { b, bMember } = callers();
      await sameAsMissing((name) => bMember.get(path(name)), 'only-a-conn');
      await sameAsMissing((name) => b.get(path(name)), 'only-a-conn');
      expect(await schedule(bMember, 'shared-conn')).toBe(SCHEDULE.b);
    },
    'GET /api/v1/namespaces/:ns/connections': async () => {
      const { a, bMember } = callers();
      const list = async (who: Caller) =>
        (
          (await who.get(`/api/v1/namespaces/${NS}/connections`)).body as {
            connections: Array<{ name: string }>;
          }
        ).connections.map((c) => c.name);
      // B's own (its dup-conn may be gone: the DELETE entry deletes it).
      const ofB = await list(bMember);
      expect(ofB).toContain('shared-conn');
      expect(ofB).not.toContain('only-a-conn');
      expect(await list(a)).toEqual(CONNECTIONS_OF_A);
    },
    'GET /api/v1/namespaces/:ns/connections/:name/ledger': async () => {
      const { bMember } = callers();
      await sameAsMissing((name) => bMember.get(path(name, '/ledger')), 'only-a-conn');
      expect((await bMember.get(path('shared-conn', '/ledger'))).status).toBe(200);
    },
    'POST /api/v1/namespaces/:ns/connections/:name/reset': async () => {
      const { b, bMember } = callers();
      await sameAsMissing((name) => bMember.post(path(name, '/reset')), 'only-a-conn');
      await sameAsMissing(
        (name) => b.post(path(name, '/reset')).send({ streams: [{ name: 'users' }] }),
        'only-a-conn',
      );
      expect((await bMember.post(path('shared-conn', '/reset'))).status).toBe(200);
    },
    'DELETE /api/v1/namespaces/:ns/connections/:name': async () => {
      const { a, bMember } = callers();
      await sameAsMissing((name) => bMember.delete(path(name)), 'only-a-conn');
      expect((await bMember.delete(path('dup-conn'))).status).toBe(204);
      expect((await bMember.get(path('dup-conn'))).status).toBe(404);
      expect(await schedule(a, 'dup-conn')).toBe(SCHEDULE.a);
    },
  };
}
