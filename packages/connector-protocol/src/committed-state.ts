import type {
  AirbyteState,
  GlobalStateBody,
  LegacyStateBody,
  StreamDescriptor,
  StreamStateBody,
} from './messages';

/**
 * A connection's committed state: what the destination has acknowledged, to
 * start the next read from. Each entry is the source's own state object as it
 * sent it, so nothing the platform or the destination added reaches the source.
 */
export type CommittedState =
  /** One state per stream; a stream's newest state replaces its previous one. */
  | { type: 'STREAM'; streams: StreamStateBody[] }
  /** One state for all streams (shared state plus per-stream states), replaced whole. */
  | { type: 'GLOBAL'; state: GlobalStateBody }
  /** One opaque blob, replaced whole. */
  | { type: 'LEGACY'; state: LegacyStateBody };

/** The committed state after one more acknowledged state. Pure. */
export function applyCommittedState(
  committed: CommittedState | undefined,
  state: AirbyteState,
): CommittedState {
  switch (state.type) {
    case 'STREAM': {
      // A source that changed state type starts a new per-stream state.
      const streams = committed?.type === 'STREAM' ? committed.streams : [];
      const same = (s: StreamStateBody) =>
        sameDescriptor(s.stream.stream_descriptor, state.stream.stream_descriptor);
      const index = streams.findIndex(same);
      const next = index === -1 ? [...streams, state] : streams.map((s, i) => (i === index ? state : s));
      return { type: 'STREAM', streams: next };
    }
    case 'GLOBAL':
      return { type: 'GLOBAL', state };
    default:
      return { type: 'LEGACY', state: state as LegacyStateBody };
  }
}

/**
 * The content of the file a source's `read --state` takes: a list of state
 * objects for STREAM and GLOBAL, the bare blob for LEGACY (the format sources
 * written for legacy state expect). Undefined: no state, start from scratch.
 */
export function stateArgument(committed: CommittedState | undefined): unknown {
  if (!committed) return undefined;
  switch (committed.type) {
    case 'STREAM':
      return committed.streams.length > 0 ? committed.streams : undefined;
    case 'GLOBAL':
      return [committed.state];
    case 'LEGACY':
      return committed.state.data;
  }
}

/**
 * The committed state without the given streams (a per-stream reset): their
 * next read starts from scratch. A LEGACY state cannot be split, so any reset
 * of it clears it whole (undefined).
 */
export function resetStreams(
  committed: CommittedState | undefined,
  streams: readonly StreamDescriptor[],
): CommittedState | undefined {
  if (!committed) return undefined;
  const reset = (d: StreamDescriptor) => streams.some((s) => sameDescriptor(s, d));
  switch (committed.type) {
    case 'STREAM': {
      const left = committed.streams.filter((s) => !reset(s.stream.stream_descriptor));
      return left.length > 0 ? { type: 'STREAM', streams: left } : undefined;
    }
    case 'GLOBAL': {
      const global = committed.state.global;
      const streamStates = global.stream_states.filter((s) => !reset(s.stream_descriptor));
      return {
        type: 'GLOBAL',
        state: { ...committed.state, global: { ...global, stream_states: streamStates } },
      };
    }
    case 'LEGACY':
      return undefined;
  }
}

export function sameDescriptor(a: StreamDescriptor, b: StreamDescriptor): boolean {
  return a.name === b.name && (a.namespace ?? null) === (b.namespace ?? null);
}
