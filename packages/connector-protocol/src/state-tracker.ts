import { applyCommittedState, type CommittedState } from './committed-state';
import { streamKey } from './configured-catalog';
import { stateType, type AirbyteState, type StateMessage, type StateType } from './messages';

export interface StreamCounts {
  records: number;
  bytes: number;
}

/** Counts per stream, keyed by `streamKey` (`namespace.name` or `name`). */
export type CountsByStream = Record<string, StreamCounts>;

/** A source state the destination acknowledged. */
export interface StateCommit {
  /** The source's state, numbered 1, 2, … in the order the source emitted its states. */
  sequence: number;
  /** The source's state message as it sent it (not the destination's echo). */
  message: StateMessage;
  /** Earlier states of the same scope the destination acknowledged with this one, without echoing them. */
  covered: number[];
  /** Records and bytes this commit made durable, per stream (those of the covered states included). */
  counts: CountsByStream;
  /** The connection's committed state after this commit: what to persist. */
  committed: CommittedState;
}

/** The source or the destination broke the state rules; the sync must fail, the committed state stays. */
export class StateTrackingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateTrackingError';
  }
}

interface PendingState {
  sequence: number;
  key: string;
  message: StateMessage;
  counts: CountsByStream;
}

/**
 * The orchestrator's bookkeeping between a source and a destination, pure (no
 * I/O): records forwarded since each source state, the source states sent
 * and not yet acknowledged, and the committed state. A destination acknowledges
 * a state by echoing it once the records before it are durable; an echo also
 * acknowledges the earlier pending states of its scope (a stream for STREAM
 * state, the whole connection for GLOBAL and LEGACY), since destinations may
 * echo only the newest state of a batch.
 */
export class StateTracker {
  private sequence = 0;
  private type: StateType | undefined;
  private readonly pending = new Map<string, PendingState[]>();
  private readonly sinceState = new Map<string, StreamCounts>();
  private readonly emittedCounts: CountsByStream = {};
  private readonly committedCounts: CountsByStream = {};
  private state: CommittedState | undefined;

  /** `initial`: the connection's committed state before this sync. */
  constructor(initial?: CommittedState) {
    this.state = initial;
  }

  /** A RECORD forwarded to the destination; `bytes` is its line's size. */
  recordEmitted(stream: string, namespace: string | null | undefined, bytes: number): void {
    const key = streamKey(stream, namespace);
    const since = this.sinceState.get(key);
    if (since) {
      since.records++;
      since.bytes += bytes;
    } else {
      this.sinceState.set(key, { records: 1, bytes });
    }
    add(this.emittedCounts, key, 1, bytes);
  }

  /** A STATE from the source, forwarded to the destination after the records before it. Returns its sequence. */
  sourceState(message: StateMessage): number {
    const type = stateType(message.state);
    if (this.type && this.type !== type) {
      throw new StateTrackingError(
        `the source sent a ${type} state after ${this.type} states in the same sync`,
      );
    }
    this.type = type;
    const scope = scopeOf(message.state);
    const counts: CountsByStream = {};
    for (const [key, since] of this.sinceState) {
      // A stream's state covers that stream's records; GLOBAL and LEGACY cover every stream's.
      if (scope !== GLOBAL_SCOPE && key !== scope) continue;
      counts[key] = { ...since };
      this.sinceState.delete(key);
    }
    const entry: PendingState = { sequence: ++this.sequence, key: stateKey(message.state), message, counts };
    const queue = this.pending.get(scope);
    if (queue) queue.push(entry);
    else this.pending.set(scope, [entry]);
    return entry.sequence;
  }

  /** A STATE echoed by the destination. Throws StateTrackingError if it matches no pending source state. */
  destinationState(echo: StateMessage): StateCommit {
    const scope = scopeOf(echo.state);
    const queue = this.pending.get(scope) ?? [];
    const key = stateKey(echo.state);
    const index = queue.findIndex((p) => p.key === key);
    const match = queue[index];
    if (!match) {
      throw new StateTrackingError(
        `the destination echoed a state that is not pending (never sent, or already acknowledged): ${describe(echo.state)}`,
      );
    }
    const acknowledged = queue.splice(0, index + 1);
    const counts: CountsByStream = {};
    for (const p of acknowledged) {
      for (const [stream, c] of Object.entries(p.counts)) {
        add(counts, stream, c.records, c.bytes);
        add(this.committedCounts, stream, c.records, c.bytes);
      }
    }
    this.state = applyCommittedState(this.state, match.message.state);
    return {
      sequence: match.sequence,
      message: match.message,
      covered: acknowledged.slice(0, -1).map((p) => p.sequence),
      counts,
      committed: this.state,
    };
  }

  /** The committed state: the initial one, updated by every acknowledgement so far. */
  get committed(): CommittedState | undefined {
    return this.state;
  }

  /** Records and bytes forwarded to the destination, per stream. */
  get emitted(): CountsByStream {
    return clone(this.emittedCounts);
  }

  /** Records and bytes the destination acknowledged (through a state echo), per stream. */
  get committedTotals(): CountsByStream {
    return clone(this.committedCounts);
  }

  /** Source states sent and not acknowledged yet. */
  get pendingStates(): number {
    let n = 0;
    for (const q of this.pending.values()) n += q.length;
    return n;
  }
}

const GLOBAL_SCOPE = '\u0000global';

function scopeOf(state: AirbyteState): string {
  if (state.type === 'STREAM') {
    const d = state.stream.stream_descriptor;
    return streamKey(d.name, d.namespace);
  }
  return GLOBAL_SCOPE;
}

/**
 * What identifies a state when the destination echoes it: its protocol
 * content, with keys sorted (a destination may re-serialize it) and without
 * the statistics fields a platform or destination adds.
 */
function stateKey(state: AirbyteState): string {
  const type = stateType(state);
  const body: Record<string, unknown> = { type };
  if (type === 'STREAM') body.stream = (state as { stream?: unknown }).stream;
  else if (type === 'GLOBAL') body.global = (state as { global?: unknown }).global;
  else body.data = (state as { data?: unknown }).data;
  return canonicalJson(body);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function describe(state: AirbyteState): string {
  const text = canonicalJson(state);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function add(counts: CountsByStream, key: string, records: number, bytes: number): void {
  const c = counts[key];
  if (c) {
    c.records += records;
    c.bytes += bytes;
  } else {
    counts[key] = { records, bytes };
  }
}

function clone(counts: CountsByStream): CountsByStream {
  return Object.fromEntries(Object.entries(counts).map(([k, c]) => [k, { ...c }]));
}
