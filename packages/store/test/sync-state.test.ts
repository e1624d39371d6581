import { StaleFenceError } from '@sluice/protocol';
import {
  commitSyncState,
  getSyncState,
  listSyncCommits,
  resetSyncState,
  type CommitSyncState,
  type SyncKey,
} from '@sluice/store';
import { claimOne, completeTaskRun, queueOne, seedExecution, useStoreDatabase } from './fixtures';

// The committed state of a sync task and its commit ledger (docs/connectors.md#sync):
// one statement writes both, fenced by the task run's fence.

const stream = (name: string, state: unknown) =>
  JSON.stringify({ type: 'STREAM', stream: { stream_descriptor: { name }, stream_state: state } });

describe('sync state and commit ledger', () => {
  const store = useStoreDatabase();
  let execution: string;
  const key: SyncKey = { workspace: 'w', namespace: 'ns', flowId: 'flow', taskId: 'sync' };

  beforeEach(async () => {
    await store.pool.query('DELETE FROM executions');
    await store.pool.query('DELETE FROM sync_states');
    execution = await seedExecution(store.pool);
  });

  async function holder(attempt = 1) {
    await queueOne(store.pool, execution, { taskId: 'sync', attempt });
    const run = await claimOne(store.pool);
    return { taskRunId: run.id, fence: run.fence };
  }

  const commit = (ref: { taskRunId: string; fence: number }, over: Partial<CommitSyncState>) =>
    commitSyncState(store.pool, {
      ...ref,
      sequence: 1,
      stateType: 'STREAM',
      stream: { name: 'users', namespace: null },
      state: stream('users', { cursor: 1 }),
      streams: { users: { records: 10, bytes: 1000 } },
      ...over,
    });

  it('commits per stream, keeps the state text as sent, and ledgers each commit newest first', async () => {
    const ref = await holder();
    // Key order and spacing are the connector's: the text is stored as is.
    const text =
      '{"type":"STREAM","stream":{"stream_state":{"z":1,"a":2},"stream_descriptor":{"name":"users"}}}';
    expect(await commit(ref, { sequence: 1, state: text })).toBe(true);
    expect(
      await commit(ref, {
        sequence: 2,
        stream: { name: 'orders', namespace: 'shop' },
        state: stream('orders', { cursor: 5 }),
        streams: { 'shop.orders': { records: 3, bytes: 30 } },
      }),
    ).toBe(true);
    expect(await commit(ref, { sequence: 3, state: stream('users', { cursor: 2 }) })).toBe(true);

    const state = await getSyncState(store.pool, key);
    expect(state.map((s) => [s.stateType, s.stream, JSON.parse(s.state)])).toEqual([
      ['STREAM', { name: 'users', namespace: null }, JSON.parse(stream('users', { cursor: 2 }))],
      ['STREAM', { name: 'orders', namespace: 'shop' }, JSON.parse(stream('orders', { cursor: 5 }))],
    ]);
    expect(state[0]?.taskRunId).toBe(ref.taskRunId);

    const ledger = await listSyncCommits(store.pool, key, { limit: 10 });
    expect(ledger.map((l) => [l.sequence, l.stream?.name, l.records, l.bytes, l.attempt])).toEqual([
      [3, 'users', 10, 1000, 1],
      [2, 'orders', 3, 30, 1],
      [1, 'users', 10, 1000, 1],
    ]);
    expect(ledger[1]?.streams).toEqual({ 'shop.orders': { records: 3, bytes: 30 } });
    expect(ledger[0]?.executionId).toBe(execution);
    // Paged: the next page starts below the last id of the previous one.
    const first = await listSyncCommits(store.pool, key, { limit: 2 });
    const next = await listSyncCommits(store.pool, key, { limit: 2, before: first[1]?.id });
    expect([...first, ...next].map((l) => l.sequence)).toEqual([3, 2, 1]);
    // Another task's key sees nothing.
    expect(await getSyncState(store.pool, { ...key, taskId: 'other' })).toEqual([]);
    expect(await listSyncCommits(store.pool, { ...key, flowId: 'x' }, { limit: 10 })).toEqual([]);
  });

  it('refuses a stale fence and changes nothing; a resent sequence changes nothing either', async () => {
    const ref = await holder();
    await commit(ref, { sequence: 1 });
    await expect(commit({ ...ref, fence: ref.fence + 1 }, { sequence: 2 })).rejects.toBeInstanceOf(
      StaleFenceError,
    );
    expect(await commit(ref, { sequence: 1, state: stream('users', { cursor: 99 }) })).toBe(false);
    // Once the run has ended, its holder can commit no more.
    await completeTaskRun(store.pool, { ...ref, state: 'FAILED' });
    await expect(commit(ref, { sequence: 2, state: stream('users', { cursor: 7 }) })).rejects.toBeInstanceOf(
      StaleFenceError,
    );

    const state = await getSyncState(store.pool, key);
    expect(state.map((s) => JSON.parse(s.state).stream.stream_state)).toEqual([{ cursor: 1 }]);
    expect((await listSyncCommits(store.pool, key, { limit: 10 })).map((l) => l.sequence)).toEqual([1]);
  });

  it('keeps one row for GLOBAL and LEGACY state, replacing stream rows (and the other way round)', async () => {
    const first = await holder(1);
    await commit(first, { sequence: 1 });
    const global = {
      type: 'GLOBAL',
      global: {
        shared_state: { lsn: 10 },
        stream_states: [
          { stream_descriptor: { name: 'users' }, stream_state: { c: 1 } },
          { stream_descriptor: { name: 'orders', namespace: 'shop' }, stream_state: { c: 2 } },
        ],
      },
    };
    await commit(first, { sequence: 2, stateType: 'GLOBAL', stream: null, state: JSON.stringify(global) });
    let state = await getSyncState(store.pool, key);
    expect(state.map((s) => [s.stateType, s.stream])).toEqual([['GLOBAL', null]]);

    // A per-stream reset of a GLOBAL state drops that stream's entry and keeps the shared state.
    expect(await resetSyncState(store.pool, key, [{ name: 'orders', namespace: 'shop' }])).toBe(1);
    state = await getSyncState(store.pool, key);
    const kept = JSON.parse(state[0]?.state ?? '{}');
    expect(kept.global.shared_state).toEqual({ lsn: 10 });
    expect(kept.global.stream_states).toEqual([
      { stream_descriptor: { name: 'users' }, stream_state: { c: 1 } },
    ]);

    await commit(first, { sequence: 3, stateType: 'LEGACY', stream: null, state: '{"data":{"x":1}}' });
    expect((await getSyncState(store.pool, key)).map((s) => s.stateType)).toEqual(['LEGACY']);
    // A LEGACY state cannot be split: any reset clears it.
    expect(await resetSyncState(store.pool, key, [{ name: 'users', namespace: null }])).toBe(1);
    expect(await getSyncState(store.pool, key)).toEqual([]);

    // A STREAM state after a whole-key one replaces it.
    await commit(first, { sequence: 4, stateType: 'LEGACY', stream: null, state: '{"data":{}}' });
    await commit(first, { sequence: 5 });
    expect((await getSyncState(store.pool, key)).map((s) => s.stateType)).toEqual(['STREAM']);
  });

  it('resets one stream or the whole key', async () => {
    const ref = await holder();
    await commit(ref, { sequence: 1 });
    await commit(ref, {
      sequence: 2,
      stream: { name: 'orders', namespace: null },
      state: stream('orders', 1),
    });
    expect(await resetSyncState(store.pool, key, [{ name: 'users', namespace: null }])).toBe(1);
    expect((await getSyncState(store.pool, key)).map((s) => s.stream?.name)).toEqual(['orders']);
    expect(await resetSyncState(store.pool, key)).toBe(1);
    expect(await getSyncState(store.pool, key)).toEqual([]);
    // The ledger is history: a reset keeps it.
    expect(await listSyncCommits(store.pool, key, { limit: 10 })).toHaveLength(2);
  });
});
