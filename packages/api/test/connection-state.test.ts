import { getSyncState } from '@sluice/store';
import { startApiHarness, type ApiHarness } from './harness';
import {
  commitStream,
  connectionBody,
  connectionPath,
  finishSync,
  postConnection,
  putConnection,
  reportEmitted,
  startSync,
  type SyncRun,
} from './connection-fixtures';
import { A, B, caller, tokenOf, type Caller } from './workspaces';

// A connection's committed state, last syncs and commit ledger as GET shows
// them, state resets and DELETE (docs/api.md#connections). The rows are
// committed through the store's commitSyncState, as the runner API does.

let h: ApiHarness;
let member: Caller;
const NS = 'sync';
const NAME = 'pg-to-dw';
const users = { name: 'users', namespace: null };
const orders = { name: 'orders', namespace: 'shop' };
const key = { workspace: A, namespace: NS, flowId: NAME, taskId: 'sync' };
let run: SyncRun;

beforeAll(async () => {
  h = await startApiHarness();
  member = caller(h.publicApp, await tokenOf(A, 'member'));
  expect((await postConnection(member, NS, NAME, connectionBody())).status).toBe(201);
  run = await startSync(h, member, NS, NAME);
  await commitStream(h, run, 1, users, 100, 5);
  await commitStream(h, run, 2, orders, 7, 3);
  await commitStream(h, run, 3, users, 120, 2);
});
afterAll(() => h.close());

const get = async () => {
  const res = await member.get(connectionPath(NS, NAME));
  expect(res.status).toBe(200);
  return res.body as {
    state: Array<{ stateType: string; stream: unknown; state: { stream: { stream_state: unknown } } }>;
    syncs: Array<{ executionId: string; state: string; attempts: Array<Record<string, unknown>> }>;
    ledger: { entries: Array<{ sequence: number; records: number; streams: unknown }>; nextCursor: unknown };
  };
};

describe('GET a connection with committed rows', () => {
  it('shows the committed state per stream, the running sync and the ledger newest first', async () => {
    const body = await get();
    expect(body.state.map((s) => [s.stateType, s.stream, s.state.stream.stream_state])).toEqual([
      ['STREAM', users, { cursor: 120 }],
      ['STREAM', orders, { cursor: 7 }],
    ]);
    expect(body.syncs).toEqual([
      expect.objectContaining({
        executionId: run.executionId,
        state: 'RUNNING',
        attempts: [
          expect.objectContaining({
            taskRunId: run.taskRunId,
            attempt: 1,
            state: 'RUNNING',
            recordsEmitted: null,
            recordsCommitted: 10,
            bytesCommitted: 1000,
            commits: 3,
          }),
        ],
      }),
    ]);
    expect(body.ledger.entries.map((e) => [e.sequence, e.records])).toEqual([
      [3, 2],
      [2, 3],
      [1, 5],
    ]);
    expect(body.ledger.entries[1]!.streams).toEqual({ 'shop.orders': { records: 3, bytes: 300 } });
    expect(body.ledger.nextCursor).toBeNull();
  });

  it('is, with its state and ledger, a missing connection for another workspace', async () => {
    const other = caller(h.publicApp, await tokenOf(B, 'admin'));
    for (const call of [
      other.get(connectionPath(NS, NAME)),
      other.get(connectionPath(NS, NAME, '/ledger')),
      other.post(connectionPath(NS, NAME, '/reset')),
      other.delete(connectionPath(NS, NAME)),
      putConnection(other, NS, NAME, connectionBody()),
    ]) {
      const res = await call;
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        error: { code: 'not_found', message: `connection ${NS}/${NAME} not found` },
      });
    }
    expect(await getSyncState(h.pool, key)).toHaveLength(2);
    expect((await get()).ledger.entries).toHaveLength(3);
  });

  it('refuses a reset or a delete while the sync runs (409), and changes nothing', async () => {
    const reset = await member.post(connectionPath(NS, NAME, '/reset'));
    expect(reset.status).toBe(409);
    expect(reset.body.error.code).toBe('conflict');
    expect((await member.delete(connectionPath(NS, NAME))).status).toBe(409);
    expect(await getSyncState(h.pool, key)).toHaveLength(2);
  });

  it('shows records emitted beside committed: running totals while it syncs, the final ones once it ended', async () => {
    await reportEmitted(h, run, 11);
    expect((await get()).syncs[0]!.attempts[0]).toMatchObject({
      recordsEmitted: 11,
      bytesEmitted: 1100,
      recordsCommitted: 10,
    });
    await finishSync(h, run, 12);
    const [sync] = (await get()).syncs;
    expect(sync).toMatchObject({ state: 'SUCCEEDED' });
    expect(sync!.attempts[0]).toMatchObject({
      state: 'SUCCEEDED',
      recordsEmitted: 12,
      bytesEmitted: 1200,
      recordsCommitted: 10,
    });
  });

  it('pages the whole ledger on …/ledger', async () => {
    const first = await member.get(connectionPath(NS, NAME, '/ledger?limit=2'));
    expect(first.status).toBe(200);
    expect(first.body.entries.map((e: { sequence: number }) => e.sequence)).toEqual([3, 2]);
    const rest = await member.get(
      connectionPath(NS, NAME, `/ledger?limit=2&cursor=${first.body.nextCursor}`),
    );
    expect(rest.body.entries.map((e: { sequence: number }) => e.sequence)).toEqual([1]);
    expect(rest.body.nextCursor).toBeNull();
    const flowCursor = Buffer.from(JSON.stringify(['pg-to-dw'])).toString('base64url');
    const bad = await member.get(connectionPath(NS, NAME, `/ledger?cursor=${flowCursor}`));
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_cursor');
  });
});

describe('POST …/reset', () => {
  it('clears one stream\u2019s state, then the whole state; the ledger stays', async () => {
    const one = await member.post(connectionPath(NS, NAME, '/reset')).send({ streams: [{ name: 'users' }] });
    expect(one.status).toBe(200);
    expect(one.body.reset).toBe(1);
    expect(one.body.state.map((s: { stream: unknown }) => s.stream)).toEqual([orders]);
    expect((await get()).state.map((s) => s.stream)).toEqual([orders]);

    const all = await member.post(connectionPath(NS, NAME, '/reset'));
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ reset: 1, state: [] });
    expect(await getSyncState(h.pool, key)).toEqual([]);
    expect((await get()).ledger.entries).toHaveLength(3);
  });

  it('takes only a list of streams', async () => {
    const res = await member.post(connectionPath(NS, NAME, '/reset')).send({ streams: 'users' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });
});

describe('DELETE', () => {
  it('removes the flow and the committed state, and keeps the ledger', async () => {
    const again = await startSync(h, member, NS, NAME);
    await commitStream(h, again, 1, orders, 9, 4);
    await finishSync(h, again, 4);
    expect(await getSyncState(h.pool, key)).toHaveLength(1);

    expect((await member.delete(connectionPath(NS, NAME))).status).toBe(204);
    expect((await member.get(connectionPath(NS, NAME))).status).toBe(404);
    expect((await member.get(`/api/v1/namespaces/${NS}/flows/${NAME}`)).status).toBe(404);
    expect((await member.delete(connectionPath(NS, NAME))).status).toBe(404);
    expect(await getSyncState(h.pool, key)).toEqual([]);
    const { rows } = await h.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM sync_commits WHERE workspace = $1 AND namespace = $2 AND flow_id = $3',
      [A, NS, NAME],
    );
    expect(rows[0]!.n).toBe(4);
  });
});
