import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
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

export interface ProcessEndpointOptions {
  /** Where the files go: the run dir, beside work/, so no snapshot file can shadow them. */
  filesDir: string;
  cwd: string;
  env: Record<string, string>;
  /** Longest stderr line kept; longer ones are cut (LineSplitter). */
  logLineMaxBytes: number;
  maskCut: (kept: string) => string;
}

/**
 * The process executor's endpoints: each connector a child process of the
 * runner in its own process group (so a stop reaches what it started), its
 * stdout (and a destination's stdin) a pipe.
 */
export class ProcessEndpointStarter implements EndpointStarter {
  constructor(private readonly options: ProcessEndpointOptions) {}

  async start(launch: EndpointLaunch): Promise<SyncEndpoint> {
    const names = endpointFileNames(launch.role);
    const dir = this.options.filesDir;
    const paths: EndpointFilePaths = { config: join(dir, names.config), catalog: join(dir, names.catalog) };
    if (launch.files.state !== undefined) paths.state = join(dir, names.state);
    // The config holds resolved secrets: readable by the task's user only.
    await writeFile(paths.config, launch.files.config, { mode: 0o600 });
    await writeFile(paths.catalog, launch.files.catalog, { mode: 0o600 });
    if (paths.state !== undefined) await writeFile(paths.state, launch.files.state ?? '', { mode: 0o600 });
    const [file, ...args] = endpointArgv(launch.command, launch.operation, paths);
    const child = spawn(file, args, {
      cwd: this.options.cwd,
      env: this.options.env,
      detached: true,
      stdio: [launch.role === 'destination' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        child.off('error', reject);
        // Later errors (a failed kill) must not crash the runner.
        child.on('error', () => {});
        resolve();
      });
    });
    return new ProcessEndpoint(launch.role, child, launch.onStderrLine, this.options);
  }
}

/** TERM and KILL go to the connector's whole process group. */
class ProcessEndpoint extends TermThenKill implements SyncEndpoint {
  readonly stdout: Readable;
  readonly stdin: Writable | null;
  readonly exited: Promise<EndpointExit>;
  readonly describe: string;
  private readonly pid: number;

  constructor(
    readonly role: SyncRole,
    private readonly child: ChildProcess,
    onStderrLine: (line: string) => void,
    options: ProcessEndpointOptions,
  ) {
    super();
    this.pid = child.pid ?? -1;
    this.describe = `pid ${this.pid}`;
    this.stdout = child.stdout!;
    this.stdin = child.stdin ?? null;
    // A destination that exits before reading all its input: the write fails with EPIPE, seen as 'close'.
    this.stdin?.on('error', () => {});
    splitStderr(child.stderr!, options, onStderrLine);
    let exit: EndpointExit = { code: null, signal: null };
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // What it left running owns nothing any more.
      this.signalGroup('SIGKILL');
    });
    this.exited = new Promise((resolve) =>
      child.on('close', () => {
        this.exitedNow();
        resolve(exit);
      }),
    );
  }

  protected term(): void {
    this.signalGroup('SIGTERM');
  }

  protected forceKill(): void {
    this.signalGroup('SIGKILL');
  }

  private signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // ESRCH: nothing left of the group.
    }
  }
}
