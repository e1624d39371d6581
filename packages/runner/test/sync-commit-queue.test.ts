import { StateTracker, type StateMessage } from '@sluice/connector-protocol';
import { CommitQueue, type StateCommitRequest } from '../src/sync/commit-queue';
import { stateFileBody } from '../src/sync/state-file';

// The runner's commits of acknowledged states (docs/connectors.md#sync): one at a time, in order,
// folded per stream while one is in flight, nothing lost.

const state = (name: string, cursor: number): StateMessage => ({
  type: 'STATE',
  state: { type: 'STREAM', stream: { stream_descriptor: { name }, stream_state: { cursor } } },
});

test('acknowledgements that arrive during a commit are folded per stream into the newest state, counts summed', async () => {
  const tracker = new StateTracker();
  const sent: StateCommitRequest[] = [];
  let release: () => void = () => {};
  const queue = new CommitQueue(
    (c) => {
      sent.push(c);
      return new Promise<void>((resolve) => (release = resolve));
    },
    () => {},
  );
  const cursors: Array<[string, number]> = [
    ['a', 1],
    ['a', 2],
    ['b', 1],
    ['a', 3],
    ['b', 2],
  ];
  for (const [name, cursor] of cursors) {
    tracker.recordEmitted(name, null, 10);
    tracker.sourceState(state(name, cursor));
  }
  for (const [name, cursor] of cursors) queue.push(tracker.destinationState(state(name, cursor)));
  // The first is in flight; the other four wait and are folded into a:3 and b:2.
  release();
  await new Promise((r) => setImmediate(r));
  release();
  await new Promise((r) => setImmediate(r));
  release();
  await queue.drain();
  expect(sent.map((c) => [c.sequence, c.message.state, c.streams])).toEqual([
    [1, state('a', 1).state, { a: { records: 1, bytes: 10 } }],
    [4, state('a', 3).state, { a: { records: 2, bytes: 20 } }],
    [5, state('b', 2).state, { b: { records: 2, bytes: 20 } }],
  ]);
  expect(queue.committed).toEqual({ a: { records: 3, bytes: 30 }, b: { records: 2, bytes: 20 } });
  expect(queue.commitCount).toBe(3);
});

test('a failed commit stops the queue: nothing after it is sent', async () => {
  const errors: Error[] = [];
  const sent: number[] = [];
  const queue = new CommitQueue(
    async (c) => {
      sent.push(c.sequence);
      if (c.sequence === 1) throw new Error('409 stale fence');
    },
    (e) => errors.push(e),
  );
  const tracker = new StateTracker();
  for (const n of [1, 2]) tracker.sourceState(state('a', n));
  queue.push(tracker.destinationState(state('a', 1)));
  await queue.drain();
  queue.push(tracker.destinationState(state('a', 2)));
  await queue.drain();
  expect(sent).toEqual([1]);
  expect(errors.map((e) => e.message)).toEqual(['409 stale fence']);
});

test('the --state file is the stored state texts themselves, not re-serialized', () => {
  const text =
    '{"type":"STREAM","stream":{"stream_state":{"cursor":12345678901234567890},"stream_descriptor":{"name":"a"}}}';
  expect(stateFileBody([{ stateType: 'STREAM', stream: { name: 'a', namespace: null }, state: text }])).toBe(
    `[${text}]`,
  );
  expect(stateFileBody([{ stateType: 'LEGACY', stream: null, state: '{"data":{"c":1}}' }])).toBe('{"c":1}');
  expect(stateFileBody([])).toBeUndefined();
});
