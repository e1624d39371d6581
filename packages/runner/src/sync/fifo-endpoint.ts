import type { Readable, Writable } from 'node:stream';
import { SYNC_FILES_PLACEHOLDER, type SyncStartMessage } from '@sluice/protocol';
import {
  endpointArgv,
  endpointFileNames,
  splitStderr,
  TermThenKill,
  type EndpointExit,
  type EndpointFilePaths,
  type EndpointLaunch,
  type EndpointStarter,
  type SyncEndpoint,
  type SyncRole,
} from './endpoint';
import { describeExit, openFifoConnector, type FifoConnector } from './fifo-pipes';

export interface FifoEndpointOptions {
  /** SLUICE_SYNC_DIR: the per-attempt volume. */
  dir: string;
  /** Longest stderr line kept; longer ones are cut (LineSplitter). */
  logLineMaxBytes: number;
  maskCut: (kept: string) => string;
  /** Ends the wait for a connector's container that never comes. */
  signal?: AbortSignal;
}

/**
 * The docker executor's endpoints (docs/connectors.md#sync-on-docker): each
 * connector runs in its own container under `sluice connector-pipe`, and
 * the runner reaches it only through the FIFOs of the shared volume — no
 * Docker socket. The connector's command is the wrapper's (the executor read
 * it from the image); the launch gives the operation's arguments and files,
 * which travel over the control pipe and are written by the wrapper as the
 * connector's own user.
 */
export class FifoEndpointStarter implements EndpointStarter {
  constructor(private readonly options: FifoEndpointOptions) {}

  async start(launch: EndpointLaunch): Promise<SyncEndpoint> {
    const names = endpointFileNames(launch.role);
    const at = (name: string) => `${SYNC_FILES_PLACEHOLDER}/${name}`;
    const paths: EndpointFilePaths = { config: at(names.config), catalog: at(names.catalog) };
    const files: Record<string, string> = {
      [names.config]: launch.files.config,
      [names.catalog]: launch.files.catalog,
    };
    if (launch.files.state !== undefined) {
      paths.state = at(names.state);
      files[names.state] = launch.files.state;
    }
    // Only the operation's part: the wrapper prepends the command it was started with.
    const [, ...args] = endpointArgv(['-'], launch.operation, paths);
    const start: SyncStartMessage = { args, files };
    const connector = await openFifoConnector({
      dir: this.options.dir,
      role: launch.role,
      start,
      signal: this.options.signal,
    });
    return new FifoEndpoint(launch.role, connector, launch.onStderrLine, this.options);
  }
}

/** TERM and KILL go through the wrapper (its own grace is only a backstop). */
class FifoEndpoint extends TermThenKill implements SyncEndpoint {
  readonly stdout: Readable;
  readonly stdin: Writable | null;
  readonly exited: Promise<EndpointExit>;
  readonly describe: string;

  constructor(
    readonly role: SyncRole,
    private readonly connector: FifoConnector,
    onStderrLine: (line: string) => void,
    options: FifoEndpointOptions,
  ) {
    super();
    this.describe = `${role} container`;
    this.stdout = connector.stdout;
    this.stdin = connector.stdin;
    // A destination that exits before reading all its input: the write fails with EPIPE.
    this.stdin?.on('error', () => {});
    connector.stdout.on('error', () => {});
    splitStderr(connector.stderr, options, onStderrLine);
    connector.stderr.on('error', () => {});
    const stdoutClosed = new Promise<void>((resolve) => connector.stdout.once('close', () => resolve()));
    this.exited = Promise.all([connector.exit, stdoutClosed]).then(([exit]) => {
      this.exitedNow();
      // Nothing more to say to the wrapper; closing the control pipe lets its container end.
      connector.close();
      if (exit.error) onStderrLine(`sluice connector-pipe: ${describeExit(exit)}`);
      return { code: exit.code, signal: exit.signal };
    });
  }

  protected term(): void {
    this.connector.signal('term');
  }

  protected forceKill(): void {
    this.connector.signal('kill');
  }
}
