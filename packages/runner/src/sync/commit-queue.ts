import {
  streamKey,
  type CountsByStream,
  type StateCommit,
  type StateMessage,
} from '@sluice/connector-protocol';

/** One commit as the runner API takes it: the source's state, its number, what it made durable. */
export interface StateCommitRequest {
  sequence: number;
  message: StateMessage;
  streams: CountsByStream;
}

export type SendCommit = (commit: StateCommitRequest) => Promise<unknown>;

/**
 * Sends acknowledged states to the server one at a time, in order. While a
 * commit is in flight, later acknowledgements wait; when it returns, those of
 * the same scope (a stream for STREAM state, the whole connection for GLOBAL
 * and LEGACY) are folded into one commit of the newest state with their
 * counts summed: a destination echoing faster than the server answers costs
 * fewer round trips, never a lost or reordered state. After a failure or
 * `stop()`, nothing more is sent.
 */
export class CommitQueue {
  private queued: StateCommit[] = [];
  private running: Promise<void> | null = null;
  private stopped = false;
  private failure: Error | null = null;
  private readonly committedCounts: CountsByStream = {};
  private commits = 0;
  private lastCommitted: number | null = null;

  constructor(
    private readonly send: SendCommit,
    private readonly onFailure: (error: Error) => void,
  ) {}

  push(commit: StateCommit): void {
    if (this.stopped) return;
    this.queued.push(commit);
    this.running ??= this.loop();
  }

  /** Settles once everything pushed so far has been sent (or the queue stopped). */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Nothing more is committed, queued acknowledgements included. */
  stop(): void {
    this.stopped = true;
    this.queued = [];
  }

  get error(): Error | null {
    return this.failure;
  }

  /** Records and bytes whose state the server has committed, per stream. */
  get committed(): CountsByStream {
    return Object.fromEntries(Object.entries(this.committedCounts).map(([k, c]) => [k, { ...c }]));
  }

  /** Ledger rows written by this attempt. */
  get commitCount(): number {
    return this.commits;
  }

  /** The sequence of the newest state committed by this attempt. */
  get lastSequence(): number | null {
    return this.lastCommitted;
  }

  private async loop(): Promise<void> {
    try {
      while (this.queued.length > 0 && !this.stopped) {
        for (const commit of coalesce(this.queued.splice(0))) {
          if (this.stopped) return;
          await this.send(commit);
          this.commits++;
          this.lastCommitted = commit.sequence;
          for (const [key, c] of Object.entries(commit.streams)) {
            const total = (this.committedCounts[key] ??= { records: 0, bytes: 0 });
            total.records += c.records;
            total.bytes += c.bytes;
          }
        }
      }
    } catch (error) {
      this.failure = error as Error;
      this.stop();
      this.onFailure(error as Error);
    } finally {
      this.running = null;
    }
  }
}

/** Folds acknowledgements of the same scope into one, keeping the order of their newest states. */
function coalesce(commits: StateCommit[]): StateCommitRequest[] {
  const byScope = new Map<string, StateCommitRequest>();
  for (const c of commits) {
    const scope = scopeOf(c.message);
    const previous = byScope.get(scope);
    const streams: CountsByStream = previous ? previous.streams : {};
    for (const [key, counts] of Object.entries(c.counts)) {
      const s = (streams[key] ??= { records: 0, bytes: 0 });
      s.records += counts.records;
      s.bytes += counts.bytes;
    }
    // Re-inserted so the map's order is that of the newest state of each scope.
    byScope.delete(scope);
    byScope.set(scope, { sequence: c.sequence, message: c.message, streams });
  }
  return [...byScope.values()];
}

function scopeOf(message: StateMessage): string {
  const state = message.state;
  if (state.type === 'STREAM') {
    const d = state.stream.stream_descriptor;
    return streamKey(d.name, d.namespace);
  }
  return '\u0000global';
}
