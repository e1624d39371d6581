import {
  ConfiguredAirbyteCatalog,
  DEFAULT_MAX_LINE_BYTES,
  readConnectorOutputBatches,
  StateTracker,
  StateTrackingError,
  streamKey,
  type CountsByStream,
} from '@sluice/connector-protocol';
import type { LogStream, SyncTaskPart } from '@sluice/protocol';
import { CommitQueue, type SendCommit } from './commit-queue';
import { ConnectorLog } from './connector-log';
import type { EndpointExit, EndpointStarter, SyncEndpoint, SyncRole } from './endpoint';
import { failureText } from '../failure-text';
import { ByteRuns, drained, MAX_PENDING_BYTES } from './forwarding';
import { initialCommittedState, stateFileBody } from './state-file';
import { syncOutputs } from './sync-outputs';

export interface SyncProgress {
  emitted: CountsByStream;
  committed: CountsByStream;
  /** Ledger rows this attempt wrote. */
  commits: number;
}

export interface SyncOrchestratorOptions {
  task: SyncTaskPart;
  /** Each connector's command (the task's, or its image's entrypoint), without the operation. */
  commands: Record<SyncRole, [string, ...string[]]>;
  starter: EndpointStarter;
  /** Commits one acknowledged state through the runner API. */
  commit: SendCommit;
  log: (stream: LogStream, line: string) => void;
  mask: (text: string) => string;
  logLineMaxBytes: number;
  /** Longest protocol line accepted from either connector; DEFAULT_MAX_LINE_BYTES. */
  maxLineBytes?: number;
  /** Called every `progressIntervalMs` and once at the end. */
  progress: (p: SyncProgress) => void;
  progressIntervalMs: number;
  /** SIGTERM → SIGKILL grace when the sync stops its connectors. */
  stopGraceMs: number;
  /** Both connectors are running. */
  onStarted: (describe: string) => void;
}

export type SyncOutcome =
  | { started: false; error: string; invalidTask: boolean }
  | {
      started: true;
      ok: boolean;
      /** Why it failed (the connector's TRACE message or what went wrong, then its last log lines). */
      error: string | null;
      /** The failed connector's exit code; null when none says what happened (0 included). */
      exitCode: number | null;
      outputs: Record<string, string>;
    };

/**
 * One `sync` attempt (docs/connectors.md#sync): the source's `read` piped into
 * the destination's `write`. RECORD and STATE lines are forwarded as
 * received, a batch (one read of the source's output) per write; when the
 * destination's input is full, the source is not read until it drains, so a
 * slow destination slows the source and memory stays flat. A STATE is
 * committed only once the destination echoed it (StateTracker), in order,
 * through a CommitQueue. The first failure stops both connectors; no echo
 * after it is taken.
 */
export class SyncOrchestrator {
  private readonly tracker: StateTracker;
  private readonly queue: CommitQueue;
  private readonly logs: Record<SyncRole, ConnectorLog>;
  private endpoints: Partial<Record<SyncRole, SyncEndpoint>> = {};
  private failure: { error: string; exitCode: number | null } | null = null;
  private inputEnded = false;
  private logGate: { promise: Promise<void>; release: () => void } | null = null;
  private statesSent = 0;

  constructor(private readonly options: SyncOrchestratorOptions) {
    this.tracker = new StateTracker(initialCommittedState(options.task.committedState));
    this.queue = new CommitQueue(options.commit, (error) =>
      this.fail(`the committed state could not be saved: ${error.message}`),
    );
    const logOptions = { log: options.log, mask: options.mask, logLineMaxBytes: options.logLineMaxBytes };
    this.logs = {
      source: new ConnectorLog('source', logOptions),
      destination: new ConnectorLog('destination', logOptions),
    };
  }

  /**
   * The task log is backed up (the log shipper's pressure): the source is not
   * read until it drains, so a source that logs a line per record cannot grow
   * the runner's memory. The destination is always read (its echoes commit).
   */
  setLogPressure(paused: boolean): void {
    if (paused && !this.logGate) {
      let release: () => void = () => {};
      const promise = new Promise<void>((resolve) => (release = resolve));
      this.logGate = { promise, release };
    } else if (!paused && this.logGate) {
      this.logGate.release();
      this.logGate = null;
    }
  }

  /** Stops both connectors (cancel, timeout, lost ownership); the sync then fails with `why`. */
  stop(why: string): void {
    this.fail(why);
  }

  async run(): Promise<SyncOutcome> {
    const { task } = this.options;
    const catalog = ConfiguredAirbyteCatalog.safeParse(task.catalog);
    if (!catalog.success) {
      const issue = catalog.error.issues[0];
      const where = issue?.path.map(String).join('.') || '(catalog)';
      return {
        started: false,
        error: `the configured catalog is not valid: ${where}: ${issue?.message}`,
        invalidTask: true,
      };
    }
    if (catalog.data.streams.length === 0) {
      return { started: false, error: 'the configured catalog selects no streams', invalidTask: true };
    }
    const selected = new Set(catalog.data.streams.map((s) => streamKey(s.stream.name, s.stream.namespace)));
    const catalogText = JSON.stringify(task.catalog);
    const state = stateFileBody(task.committedState);

    let destination: SyncEndpoint;
    let source: SyncEndpoint;
    try {
      destination = await this.start('destination', catalogText);
      this.endpoints.destination = destination;
    } catch (error) {
      return {
        started: false,
        error: startError('destination', this.options.commands.destination[0], error),
        invalidTask: false,
      };
    }
    try {
      source = await this.start('source', catalogText, state);
      this.endpoints.source = source;
    } catch (error) {
      destination.kill();
      await destination.exited;
      return {
        started: false,
        error: startError('source', this.options.commands.source[0], error),
        invalidTask: false,
      };
    }
    if (this.failure) {
      source.stop(this.options.stopGraceMs);
      destination.stop(this.options.stopGraceMs);
    }
    this.options.onStarted(`source ${source.describe}, destination ${destination.describe}`);
    const timer = setInterval(() => this.options.progress(this.progress()), this.options.progressIntervalMs);
    try {
      return await this.supervise(source, destination, selected, state !== undefined);
    } finally {
      clearInterval(timer);
      this.options.progress(this.progress());
    }
  }

  private async supervise(
    source: SyncEndpoint,
    destination: SyncEndpoint,
    selected: Set<string>,
    resumed: boolean,
  ): Promise<SyncOutcome> {
    const { log } = this.options;
    log('system', `sync started${resumed ? ' from the committed state' : ' without a committed state'}`);
    const reading = this.readDestination(destination).catch((e: Error) => this.fail(`runner: ${e.message}`));
    // A destination that exits before its input ended failed mid-sync; its TRACE is read first.
    const destinationWatch = destination.exited.then(async (exit) => {
      if (this.inputEnded || this.failure) return;
      await reading;
      this.fail(this.exitError('destination', exit, 'before the end of its input'), exitCodeOf(exit));
    });
    const pumped = await this.pump(source, destination, selected).catch((e: Error) => {
      this.fail(`runner: ${e.message}`);
      return 'failed' as const;
    });
    if (pumped === 'input closed' && !this.failure) {
      // Its exit says more than the closed pipe does (a TRACE, an exit code): give it a moment.
      await Promise.race([destinationWatch, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      this.fail('the destination closed its input before the end of the sync');
    }
    const sourceExit = await source.exited;
    if (!this.failure && (sourceExit.code !== 0 || this.logs.source.trace)) {
      this.fail(this.exitError('source', sourceExit), exitCodeOf(sourceExit));
    }
    if (!this.failure) {
      this.inputEnded = true;
      destination.stdin?.end();
    }
    await reading;
    const destinationExit = await destination.exited;
    await destinationWatch;
    if (!this.failure && (destinationExit.code !== 0 || this.logs.destination.trace)) {
      this.fail(this.exitError('destination', destinationExit), exitCodeOf(destinationExit));
    }
    await this.queue.drain();
    if (!this.failure && this.tracker.pendingStates > 0) {
      const n = this.tracker.pendingStates;
      this.fail(
        `the destination exited without acknowledging ${n} of the ${this.statesSent} states the source sent: the records before them are not committed`,
      );
    }
    const emittedRecords = Object.values(this.tracker.emitted).reduce((n, c) => n + c.records, 0);
    if (!this.failure && this.statesSent === 0 && emittedRecords > 0) {
      this.fail(
        `the source sent ${emittedRecords} records and no STATE: nothing could be committed (a source sends a state for each stream it reads)`,
      );
    }
    const outputs = syncOutputs(this.tracker.emitted, this.queue.committed, this.queue.commitCount);
    if (this.failure) return { started: true, ok: false, ...this.failure, outputs };
    log(
      'system',
      `sync done: ${outputs.records_emitted} records emitted, ${outputs.records_committed} committed in ${outputs.states_committed} states`,
    );
    return { started: true, ok: true, error: null, exitCode: 0, outputs };
  }

  /** Source → destination: RECORD and STATE lines as received, one write per batch, paused while the destination is full. */
  private async pump(
    source: SyncEndpoint,
    destination: SyncEndpoint,
    selected: Set<string>,
  ): Promise<'ended' | 'input closed' | 'failed'> {
    const stdin = destination.stdin;
    if (!stdin) throw new Error('the destination has no input');
    const tracker = this.tracker;
    const sourceLog = this.logs.source;
    let lastStream: string | undefined;
    let lastNamespace: string | null | undefined;
    const batches = readConnectorOutputBatches(source.stdout, {
      maxLineBytes: this.options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    });
    for await (const batch of batches) {
      if (this.logGate) await this.logGate.promise;
      if (this.failure) break;
      const out = new ByteRuns();
      for (const line of batch) {
        if (line.kind === 'message') {
          const m = line.message;
          if (m.type === 'RECORD') {
            const { stream, namespace } = m.record;
            if (stream !== lastStream || namespace !== lastNamespace) {
              if (!selected.has(streamKey(stream, namespace))) {
                this.fail(
                  `the source sent a record of stream ${streamKey(stream, namespace)} (line ${line.line}), which the configured catalog does not select`,
                );
                break;
              }
              lastStream = stream;
              lastNamespace = namespace;
            }
            tracker.recordEmitted(stream, namespace, line.bytes);
            out.add(line.raw, line.text);
            continue;
          }
          if (m.type === 'STATE') {
            try {
              tracker.sourceState(m);
            } catch (error) {
              if (!(error instanceof StateTrackingError)) throw error;
              this.fail(error.message);
              break;
            }
            this.statesSent++;
            out.add(line.raw, line.text);
            continue;
          }
        }
        const fatal = sourceLog.line(line);
        if (fatal) {
          this.fail(failureText(fatal, sourceLog.last, this.options.mask));
          break;
        }
      }
      if (this.failure) break;
      const bytes = out.take();
      if (!bytes) continue;
      if (stdin.destroyed || stdin.writableEnded) return 'input closed';
      // Up to MAX_PENDING_BYTES may wait in the runner, so the destination never starves while the
      // runner reads and parses the next batch; past it, the source is not read until they are gone.
      stdin.write(bytes);
      if (stdin.writableLength > MAX_PENDING_BYTES) await drained(stdin);
    }
    return this.failure ? 'failed' : 'ended';
  }

  /** The destination's output: each echoed STATE commits the source's states it acknowledges. */
  private async readDestination(destination: SyncEndpoint): Promise<void> {
    const destinationLog = this.logs.destination;
    const batches = readConnectorOutputBatches(destination.stdout, {
      maxLineBytes: this.options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    });
    for await (const batch of batches) {
      for (const line of batch) {
        if (line.kind === 'message' && line.message.type === 'STATE') {
          // After a failure nothing more is committed; the lines are still read so the destination can exit.
          if (this.failure) continue;
          try {
            this.queue.push(this.tracker.destinationState(line.message));
          } catch (error) {
            if (!(error instanceof StateTrackingError)) throw error;
            this.fail(error.message);
          }
          continue;
        }
        const fatal = destinationLog.line(line);
        if (fatal && !this.failure) this.fail(failureText(fatal, destinationLog.last, this.options.mask));
      }
    }
  }

  private start(role: SyncRole, catalog: string, state?: string): Promise<SyncEndpoint> {
    const endpoint = this.options.task[role];
    return this.options.starter.start({
      role,
      command: this.options.commands[role],
      operation: role === 'source' ? 'read' : 'write',
      files: { config: JSON.stringify(endpoint.config), catalog, ...(state !== undefined ? { state } : {}) },
      onStderrLine: (line) => this.logs[role].stderrLine(line),
    });
  }

  /**
   * The first failure wins: both connectors are stopped and no echo after it
   * is taken. States the destination acknowledged before it are still
   * committed (the queue drains): they are durable, and committing them
   * spares the retry that much redelivery.
   */
  private fail(error: string, exitCode: number | null = null): void {
    if (this.failure) return;
    this.failure = { error, exitCode };
    this.setLogPressure(false);
    this.endpoints.source?.stop(this.options.stopGraceMs);
    this.endpoints.destination?.stop(this.options.stopGraceMs);
  }

  private exitError(role: SyncRole, exit: EndpointExit, when?: string): string {
    const log = this.logs[role];
    const how =
      exit.code !== null ? `exited with code ${exit.code}` : `was killed by ${exit.signal ?? 'a signal'}`;
    const why = log.trace
      ? `the ${role} failed: ${log.trace}`
      : `the ${role} ${how}${when ? ` ${when}` : ''} without a TRACE error`;
    return failureText(why, log.last, this.options.mask);
  }

  private progress(): SyncProgress {
    return {
      emitted: this.tracker.emitted,
      committed: this.queue.committed,
      commits: this.queue.commitCount,
    };
  }
}

/** The task run's exit code for a failed connector: its own when it exited non-zero. */
function exitCodeOf(exit: EndpointExit): number | null {
  return exit.code !== null && exit.code !== 0 ? exit.code : null;
}

function startError(role: SyncRole, file: string, error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ENOENT':
      return `the ${role} command was not found: ${file} is not on PATH`;
    case 'EACCES':
      return `the ${role} command ${file} cannot be executed: permission denied`;
    default:
      return `the ${role} could not be started: ${e.code ?? e.message}`;
  }
}
