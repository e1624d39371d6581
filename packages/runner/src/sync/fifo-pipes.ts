import { constants, open as openCallback } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import {
  syncExitFile,
  syncRolePipes,
  type SyncConnectorExit,
  type SyncRole,
  type SyncStartMessage,
} from '@sluice/protocol';

/**
 * The runner's side of one connector of a docker sync: the FIFOs in the
 * per-attempt volume (docs/connectors.md#sync-on-docker) and the exit file
 * its `sluice connector-pipe` wrapper writes. Every open here is
 * non-blocking (O_NONBLOCK, retried while the other side is not there yet),
 * so no libuv thread ever hangs on a FIFO and an abort is always heard.
 */

// Plain fds, not FileHandles: each goes to a Socket, which closes it (a FileHandle would close it on GC).
const open = promisify(openCallback);

const RETRY_MS = 50;
const EXIT_POLL_MS = 100;
/** After the connector's stdout and stderr ended, how long its exit file may take before it counts as lost. */
const EXIT_AFTER_EOF_MS = 15_000;

export interface FifoConnectorOptions {
  /** The volume's mount (SLUICE_SYNC_DIR). */
  dir: string;
  role: SyncRole;
  start: SyncStartMessage;
  /** Aborts the wait for the wrapper (the task run is stopping). */
  signal?: AbortSignal;
}

export interface FifoConnector {
  stdout: Readable;
  stderr: Readable;
  /** The destination's stdin; null for the source (its stdin is /dev/null). */
  stdin: Writable | null;
  /** The connector's exit, from the wrapper's exit file. */
  exit: Promise<SyncConnectorExit>;
  /** Asks the wrapper to stop the connector: `term` (TERM, then KILL after its grace) or `kill` (KILL now). */
  signal(how: 'term' | 'kill'): void;
  /** Closes the control pipe: the wrapper stops a connector still running. */
  close(): void;
}

function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readExit(path: string): Promise<SyncConnectorExit | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as SyncConnectorExit;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
}

/** Opens a FIFO's write end once a reader is there (ENXIO until then); throws if the wrapper ended first. */
async function openWriter(
  path: string,
  exitFile: string,
  role: SyncRole,
  signal?: AbortSignal,
): Promise<number> {
  for (;;) {
    signal?.throwIfAborted();
    try {
      return await open(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (err) {
      if (!isErrno(err, 'ENXIO')) throw err;
    }
    const exit = await readExit(exitFile);
    if (exit) throw new Error(`the ${role} ended before it started: ${describeExit(exit)}`);
    await sleep(RETRY_MS);
  }
}

export function describeExit(exit: SyncConnectorExit): string {
  if (exit.error) return exit.error;
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exit code ${exit.code ?? 'unknown'}`;
}

/**
 * Connects to the wrapper: the control pipe first (its wrapper opens it
 * after taking hold of its data FIFOs, so the read ends opened next see no
 * early end-of-file), then the data FIFOs, then the start line.
 */
export async function openFifoConnector(options: FifoConnectorOptions): Promise<FifoConnector> {
  const { dir, role, signal } = options;
  const pipes = syncRolePipes(role);
  const at = (p: string) => join(dir, p);
  const exitFile = at(syncExitFile(role));
  const controlFd = await openWriter(at(pipes.control), exitFile, role, signal);
  const readerFd = (p: string) => open(at(p), constants.O_RDONLY | constants.O_NONBLOCK);
  const stdoutFd = await readerFd(pipes.stdout);
  const stderrFd = await readerFd(pipes.stderr);
  const stdinFd = pipes.stdin ? await openWriter(at(pipes.stdin), exitFile, role, signal) : null;

  const control = new Socket({ fd: controlFd, readable: false, writable: true });
  // A wrapper that died makes writes fail with EPIPE: its exit (or its absence) tells the story.
  control.on('error', () => undefined);
  const stdout = new Socket({ fd: stdoutFd, readable: true, writable: false });
  const stderr = new Socket({ fd: stderrFd, readable: true, writable: false });
  const stdin = stdinFd === null ? null : new Socket({ fd: stdinFd, readable: false, writable: true });
  control.write(`${JSON.stringify(options.start)}\n`);

  const ended = (s: Readable) => new Promise<void>((resolve) => s.once('close', () => resolve()));
  const outputsEnded = Promise.all([ended(stdout), ended(stderr)]);
  return {
    stdout,
    stderr,
    stdin,
    exit: waitForExit(exitFile, role, outputsEnded),
    signal: (how) => {
      if (!control.destroyed && !control.writableEnded) control.write(`${how}\n`);
    },
    close: () => {
      if (!control.writableEnded) control.end();
    },
  };
}

/** Polls the exit file; a connector whose pipes ended without one was killed with its container. */
async function waitForExit(
  exitFile: string,
  role: SyncRole,
  outputsEnded: Promise<unknown>,
): Promise<SyncConnectorExit> {
  let deadline = Infinity;
  void outputsEnded.then(() => (deadline = Date.now() + EXIT_AFTER_EOF_MS));
  for (;;) {
    const exit = await readExit(exitFile);
    if (exit) return exit;
    if (Date.now() > deadline) {
      return {
        code: null,
        signal: null,
        error: `the ${role}'s container ended without reporting the connector's exit (killed or out of memory?)`,
      };
    }
    await sleep(EXIT_POLL_MS);
  }
}
