import {
  applyCommittedState,
  resetStreams,
  stateArgument,
  StateTracker,
  StateTrackingError,
  type StateMessage,
} from '@sluice/connector-protocol';

const streamState = (name: string, cursor: number, extra: Record<string, unknown> = {}): StateMessage => ({
  type: 'STATE',
  state: { type: 'STREAM', stream: { stream_descriptor: { name }, stream_state: { cursor } }, ...extra },
});
const globalState = (lsn: number): StateMessage => ({
  type: 'STATE',
  state: {
    type: 'GLOBAL',
    global: {
      shared_state: { lsn },
      stream_states: [
        { stream_descriptor: { name: 'a' }, stream_state: { done: lsn } },
        { stream_descriptor: { name: 'b' }, stream_state: { done: lsn } },
      ],
    },
  },
});
const legacyState = (n: number): StateMessage => ({ type: 'STATE', state: { data: { n } } });

function records(tracker: StateTracker, stream: string, n: number, bytes = 100): void {
  for (let i = 0; i < n; i++) tracker.recordEmitted(stream, undefined, bytes);
}

describe('StateTracker', () => {
  it('commits STREAM states per stream when echoed, with the records before each', () => {
    const t = new StateTracker();
    records(t, 'a', 3);
    records(t, 'b', 2, 50);
    expect(t.sourceState(streamState('a', 3))).toBe(1);
    records(t, 'a', 1);
    expect(t.sourceState(streamState('b', 2))).toBe(2);
    expect(t.sourceState(streamState('a', 4))).toBe(3);
    expect(t.pendingStates).toBe(3);

    // b's state is echoed first: the scopes are independent.
    const b = t.destinationState(streamState('b', 2));
    expect(b).toMatchObject({ sequence: 2, covered: [], counts: { b: { records: 2, bytes: 100 } } });
    expect(b.committed).toEqual({ type: 'STREAM', streams: [streamState('b', 2).state] });

    const a = t.destinationState(streamState('a', 3));
    expect(a).toMatchObject({ sequence: 1, counts: { a: { records: 3, bytes: 300 } } });
    expect(t.committed).toEqual({
      type: 'STREAM',
      streams: [streamState('b', 2).state, streamState('a', 3).state],
    });
    expect(t.emitted).toEqual({ a: { records: 4, bytes: 400 }, b: { records: 2, bytes: 100 } });
    expect(t.committedTotals).toEqual({ a: { records: 3, bytes: 300 }, b: { records: 2, bytes: 100 } });
    expect(t.pendingStates).toBe(1);
  });

  it('lets one echo acknowledge the earlier states of its scope that the destination did not echo', () => {
    const t = new StateTracker();
    records(t, 'a', 2);
    t.sourceState(streamState('a', 2));
    records(t, 'a', 2);
    t.sourceState(streamState('a', 4));
    records(t, 'a', 2);
    t.sourceState(streamState('a', 6));
    const commit = t.destinationState(streamState('a', 4));
    expect(commit).toMatchObject({ sequence: 2, covered: [1], counts: { a: { records: 4, bytes: 400 } } });
    expect(t.pendingStates).toBe(1);
    // An echo of an acknowledged state is a protocol error, and changes nothing.
    expect(() => t.destinationState(streamState('a', 2))).toThrow(StateTrackingError);
    expect(() => t.destinationState(streamState('a', 99))).toThrow(/not pending/);
    expect(t.committed).toEqual({ type: 'STREAM', streams: [streamState('a', 4).state] });
  });

  it('matches an echo that the destination re-serialized or added statistics to, and commits the source state', () => {
    const t = new StateTracker();
    const sent = streamState('a', 1, { sourceStats: { recordCount: 1 }, source_field: 'kept' });
    records(t, 'a', 1);
    t.sourceState(sent);
    const echo: StateMessage = {
      type: 'STATE',
      state: {
        destinationStats: { recordCount: 1 },
        stream: { stream_state: { cursor: 1 }, stream_descriptor: { name: 'a' } },
        type: 'STREAM',
      },
    };
    const commit = t.destinationState(echo);
    expect(commit.message).toBe(sent);
    // The committed state is what the source sent: nothing the destination added.
    expect(t.committed).toEqual({ type: 'STREAM', streams: [sent.state] });
  });

  it('commits identical states one echo at a time, in order', () => {
    const t = new StateTracker();
    records(t, 'a', 1);
    t.sourceState(streamState('a', 1));
    t.sourceState(streamState('a', 1));
    expect(t.destinationState(streamState('a', 1)).sequence).toBe(1);
    expect(t.destinationState(streamState('a', 1)).sequence).toBe(2);
  });

  it('commits a GLOBAL state for every stream at once', () => {
    const t = new StateTracker();
    records(t, 'a', 2);
    records(t, 'b', 3);
    t.sourceState(globalState(10));
    records(t, 'b', 1);
    t.sourceState(globalState(11));
    const commit = t.destinationState(globalState(10));
    expect(commit.counts).toEqual({ a: { records: 2, bytes: 200 }, b: { records: 3, bytes: 300 } });
    expect(t.committed).toEqual({ type: 'GLOBAL', state: globalState(10).state });
    expect(t.destinationState(globalState(11)).counts).toEqual({ b: { records: 1, bytes: 100 } });
    expect(t.committed).toEqual({ type: 'GLOBAL', state: globalState(11).state });
  });

  it('commits a LEGACY state whole, and rejects a source that mixes state types', () => {
    const t = new StateTracker();
    records(t, 'a', 1);
    t.sourceState(legacyState(1));
    // An echo with an explicit LEGACY type is the same state.
    t.destinationState({ type: 'STATE', state: { type: 'LEGACY', data: { n: 1 } } });
    expect(t.committed).toEqual({ type: 'LEGACY', state: { data: { n: 1 } } });
    expect(() => t.sourceState(streamState('a', 1))).toThrow(
      'the source sent a STREAM state after LEGACY states',
    );
  });

  it('starts from the committed state of the last sync and keeps the streams this sync does not touch', () => {
    const before = applyCommittedState(
      applyCommittedState(undefined, streamState('a', 5).state),
      streamState('b', 7).state,
    );
    const t = new StateTracker(before);
    records(t, 'a', 1);
    t.sourceState(streamState('a', 6));
    expect(t.committed).toBe(before);
    t.destinationState(streamState('a', 6));
    expect(t.committed).toEqual({
      type: 'STREAM',
      streams: [streamState('a', 6).state, streamState('b', 7).state],
    });
    // Records after the last state stay emitted, not committed.
    records(t, 'a', 5);
    expect(t.emitted.a).toEqual({ records: 6, bytes: 600 });
    expect(t.committedTotals.a).toEqual({ records: 1, bytes: 100 });
  });
});

describe('committed state', () => {
  it('is what the next read --state takes', () => {
    const streams = applyCommittedState(undefined, streamState('a', 1).state);
    expect(stateArgument(streams)).toEqual([
      { type: 'STREAM', stream: { stream_descriptor: { name: 'a' }, stream_state: { cursor: 1 } } },
    ]);
    expect(stateArgument(applyCommittedState(streams, globalState(3).state))).toEqual([globalState(3).state]);
    expect(stateArgument(applyCommittedState(undefined, legacyState(2).state))).toEqual({ n: 2 });
    expect(stateArgument(undefined)).toBeUndefined();
  });

  it('resets single streams', () => {
    const both = applyCommittedState(
      applyCommittedState(undefined, streamState('a', 1).state),
      streamState('b', 2).state,
    );
    expect(resetStreams(both, [{ name: 'a' }])).toEqual({
      type: 'STREAM',
      streams: [streamState('b', 2).state],
    });
    expect(resetStreams(both, [{ name: 'a' }, { name: 'b' }])).toBeUndefined();
    expect(resetStreams(both, [{ name: 'a', namespace: 'other' }])).toEqual(both);
    const global = applyCommittedState(undefined, globalState(4).state);
    const reset = resetStreams(global, [{ name: 'a' }]);
    expect(
      reset?.type === 'GLOBAL' && reset.state.global.stream_states.map((s) => s.stream_descriptor.name),
    ).toEqual(['b']);
    expect(reset?.type === 'GLOBAL' && reset.state.global.shared_state).toEqual({ lsn: 4 });
    expect(
      resetStreams(applyCommittedState(undefined, legacyState(1).state), [{ name: 'a' }]),
    ).toBeUndefined();
  });
});
