import type { Readable, Writable } from 'node:stream';
import { LineSplitter } from '../line-splitter';

/**
 * The one interface the sync orchestrator drives a connector through
 * (docs/connectors.md#sync). It says nothing about the transport: the process
 * executor's endpoint is a child process and its pipes (process-endpoint.ts);
 * a container executor's can be named pipes in a shared volume. Whatever
 * implements it owns the files it is started with and their paths.
 */

export type SyncRole = 'source' | 'destination';

/** The two operations of a sync: the source's `read` and the destination's `write`. */
export type SyncOperation = 'read' | 'write';

/** What to start. The starter decides where the files go and builds the command line (endpointArgv). */
export interface EndpointLaunch {
  role: SyncRole;
  /** The connector's command (its entrypoint for an image), without the operation. */
  command: readonly [string, ...string[]];
  operation: SyncOperation;
  /**
   * Contents of the files the operation takes, written with mode 0600 before
   * the connector starts (the config holds resolved secrets). `state` only for a
   * source with a committed state.
   */
  files: { config: string; catalog: string; state?: string };
  /** Each stderr line of the connector, as soon as it is read. */
  onStderrLine: (line: string) => void;
}

export interface EndpointExit {
  code: number | null;
  signal: string | null;
}

/** A started connector. */
export interface SyncEndpoint {
  readonly role: SyncRole;
  /**
   * Its protocol output (one message per line). The orchestrator pulls it, so
   * a reader that stops reading stops the connector on a full pipe.
   */
  readonly stdout: Readable;
  /** The destination's input (the orchestrator writes RECORD and STATE lines); null for a source. */
  readonly stdin: Writable | null;
  /** Settles once the connector has exited and its stdout has ended; never rejects. */
  readonly exited: Promise<EndpointExit>;
  /** SIGTERM (or the transport's equivalent) now, SIGKILL after `graceMs`. A second call does nothing. */
  stop(graceMs: number): void;
  /** Kills it at once. */
  kill(): void;
  /** For the task log: `pid 1234`, `container abc`. */
  readonly describe: string;
}

/** Starts endpoints; rejects with an error a flow author understands when one cannot start. */
export interface EndpointStarter {
  start(launch: EndpointLaunch): Promise<SyncEndpoint>;
}

/** The file paths a launch's files were written to, as the connector sees them. */
export interface EndpointFilePaths {
  config: string;
  catalog: string;
  state?: string;
}

/**
 * The connector protocol's command line: `<command...> read --config <f>
 * --catalog <f> [--state <f>]` or `<command...> write --config <f> --catalog <f>`.
 */
export function endpointArgv(
  command: readonly [string, ...string[]],
  operation: SyncOperation,
  paths: EndpointFilePaths,
): [string, ...string[]] {
  const argv: [string, ...string[]] = [
    ...command,
    operation,
    '--config',
    paths.config,
    '--catalog',
    paths.catalog,
  ];
  if (operation === 'read' && paths.state !== undefined) argv.push('--state', paths.state);
  return argv;
}

/** The file names of a role's files, as each starter lays them out (one directory, or one per role). */
export function endpointFileNames(role: SyncRole): { config: string; catalog: string; state: string } {
  return { config: `${role}-config.json`, catalog: `${role}-catalog.json`, state: `${role}-state.json` };
}

/**
 * An endpoint's stop and kill for a transport with a TERM and a KILL: `stop`
 * sends TERM once and KILL after the grace; the subclass clears the timer
 * (`exitedNow`) once the connector is gone.
 */
export abstract class TermThenKill {
  private stopping = false;
  private killTimer: NodeJS.Timeout | null = null;

  protected abstract term(): void;
  protected abstract forceKill(): void;

  stop(graceMs: number): void {
    if (this.stopping) return;
    this.stopping = true;
    this.term();
    this.killTimer = setTimeout(() => this.forceKill(), graceMs);
  }

  kill(): void {
    this.stopping = true;
    this.forceKill();
  }

  protected exitedNow(): void {
    if (this.killTimer) clearTimeout(this.killTimer);
  }
}

/** Feeds a connector's stderr to `onStderrLine` line by line, long lines cut (LineSplitter). */
export function splitStderr(
  stderr: Readable,
  options: { logLineMaxBytes: number; maskCut: (kept: string) => string },
  onStderrLine: (line: string) => void,
): void {
  const lines = new LineSplitter(options.logLineMaxBytes, onStderrLine, options.maskCut);
  stderr.on('data', (chunk: Buffer) => lines.push(chunk));
  stderr.on('end', () => lines.end());
}
