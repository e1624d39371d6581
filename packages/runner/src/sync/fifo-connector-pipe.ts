import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import {
  SYNC_FILES_PLACEHOLDER,
  syncExitFile,
  syncFilesDir,
  syncRolePipes,
  type SyncConnectorExit,
  type SyncRole,
  type SyncStartMessage,
} from '@sluice/protocol';

/**
 * `sluice connector-pipe --dir D --role source|destination [-- <command...>]`:
 * what a connector container of a docker or kubernetes sync runs
 * (docs/connectors.md#sync-on-docker, #sync-on-kubernetes). Without a command
 * (kubernetes: nothing reads the image's config there) it is the image's
 * AIRBYTE_ENTRYPOINT, else SLUICE_CONNECTOR_ENTRYPOINT (a JSON array), from
 * this container's environment, which holds the image's variables.
 * Started through the injected runner, so the connector's image needs no
 * shell. It waits for the runner's start line on the control FIFO, writes the
 * files it carries (config, catalog, state) as 0600 files of this container's
 * user, runs `<command...> <args...>` with its stdio bound to the FIFOs, and
 * writes the connector's exit to a file the runner waits for. The end of the
 * control FIFO (the runner is gone) stops the connector.
 */

/** How long a connector has between the TERM and the KILL when the runner is gone or asked. */
const KILL_GRACE_MS = 10_000;
/** The image's NODE_OPTIONS, handed on by the executor (the container's own is emptied for this wrapper). */
export const CHILD_NODE_OPTIONS_ENV = 'SLUICE_CONNECTOR_NODE_OPTIONS';

export interface ConnectorPipeIo {
  env: Record<string, string | undefined>;
  stderr: (text: string) => void;
}

interface PipeArgs {
  dir: string;
  role: SyncRole;
  /** Empty when neither the arguments nor the environment name one: reported to the runner, as a failed start is. */
  command: string[];
}

/** The image's command from the environment (see above); null when it names none. */
function entrypointFromEnv(env: Record<string, string | undefined>): string[] | null {
  const airbyte = env.AIRBYTE_ENTRYPOINT?.trim().split(/\s+/).filter(Boolean);
  if (airbyte?.length) return airbyte;
  try {
    const parsed: unknown = JSON.parse(env.SLUICE_CONNECTOR_ENTRYPOINT ?? 'null');
    if (Array.isArray(parsed) && parsed.length > 0 && parsed.every((a) => typeof a === 'string'))
      return parsed as string[];
  } catch {
    // Not a command: reported as none.
  }
  return null;
}

export function parseConnectorPipeArgs(
  args: string[],
  env: Record<string, string | undefined> = {},
): PipeArgs | string {
  let dir: string | undefined;
  let role: string | undefined;
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') break;
    if (arg === '--dir') dir = args[++i];
    else if (arg === '--role') role = args[++i];
    else return `unknown argument ${arg}`;
  }
  const command = i < args.length ? args.slice(i + 1) : (entrypointFromEnv(env) ?? []);
  if (!dir) return '--dir is required';
  if (role !== 'source' && role !== 'destination') return '--role must be source or destination';
  if (command.length === 0 && i < args.length) return 'the connector command is required after --';
  return { dir, role, command };
}

/** Exit codes: the connector's (128 + n for a signal); 1 when it could not run; 2 for a usage error. */
export async function runConnectorPipe(argv: string[], io: ConnectorPipeIo): Promise<number> {
  const parsed = parseConnectorPipeArgs(argv, { ...process.env, ...io.env });
  if (typeof parsed === 'string') {
    io.stderr(`sluice connector-pipe: ${parsed}\n`);
    return 2;
  }
  const { dir, role } = parsed;
  const exitFile = join(dir, syncExitFile(role));
  try {
    return await pipeConnector(parsed, io, exitFile);
  } catch (err) {
    const error = `sluice connector-pipe (${role}): ${(err as Error).message}`;
    io.stderr(`${error}\n`);
    // The runner waits for this file: without it, it would only see the pipes end.
    await writeExit(exitFile, { code: null, signal: null, error }).catch(() => undefined);
    return 1;
  }
}

async function pipeConnector(args: PipeArgs, io: ConnectorPipeIo, exitFile: string): Promise<number> {
  const { dir, role, command } = args;
  const [file, ...fixed] = command;
  if (file === undefined) {
    throw new Error(
      'no connector command: none after --, and the image sets no AIRBYTE_ENTRYPOINT (or SLUICE_CONNECTOR_ENTRYPOINT)',
    );
  }
  const pipes = syncRolePipes(role);
  const at = (p: string) => join(dir, p);
  // Our own read-write ends first (a FIFO opened O_RDWR never blocks): the runner's opens of the other
  // ends succeed at once, and its read ends see no early end-of-file. Closed once the connector holds its ends.
  const holds = [pipes.stdout, pipes.stderr, pipes.stdin]
    .filter((p): p is string => p !== null)
    .map((p) => openSync(at(p), constants.O_RDWR));
  // Blocks until the runner opens its end: by then it holds the other ends of the FIFOs above.
  const controlFd = openSync(at(pipes.control), constants.O_RDONLY);
  const control = new Socket({ fd: controlFd, readable: true, writable: false });
  const lines = controlLines(control);
  const first = await lines.next();
  if (first.done) throw new Error('the runner closed the control pipe before sending the start');
  const start = JSON.parse(first.value) as SyncStartMessage;

  const filesDir = join(dir, syncFilesDir(role));
  await mkdir(filesDir, { recursive: true, mode: 0o700 });
  for (const [name, body] of Object.entries(start.files)) {
    if (name.includes('/') || name.startsWith('.')) throw new Error(`a file name with a path: ${name}`);
    await writeFile(join(filesDir, name), body, { mode: 0o600 });
  }

  const childFds = [
    pipes.stdin ? openSync(at(pipes.stdin), constants.O_RDONLY) : 'ignore',
    openSync(at(pipes.stdout), constants.O_WRONLY),
    openSync(at(pipes.stderr), constants.O_WRONLY),
  ] as const;
  const env = { ...process.env, ...io.env };
  const nodeOptions = env[CHILD_NODE_OPTIONS_ENV];
  delete env[CHILD_NODE_OPTIONS_ENV];
  if (nodeOptions !== undefined) env.NODE_OPTIONS = nodeOptions;
  else delete env.NODE_OPTIONS;
  const child = spawn(
    file,
    [...fixed, ...start.args.map((a) => a.replaceAll(SYNC_FILES_PLACEHOLDER, filesDir))],
    {
      stdio: childFds as unknown as StdioOptions,
      env,
    },
  );
  for (const fd of [...holds, ...childFds]) if (typeof fd === 'number') closeSync(fd);

  const exit = new Promise<SyncConnectorExit>((resolve) => {
    // 127/126 as a shell answers a missing or non-executable command, so the runner reports an exit code.
    child.once('error', (err: NodeJS.ErrnoException) =>
      resolve({
        code: err.code === 'ENOENT' ? 127 : err.code === 'EACCES' ? 126 : 1,
        signal: null,
        error: `starting ${file} failed: ${err.message}`,
      }),
    );
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  // tini signals only us: a stop of the container reaches the connector through here.
  const onTerm = () => stopChild(child);
  process.once('SIGTERM', onTerm);
  process.once('SIGINT', onTerm);
  void (async () => {
    for await (const line of lines) {
      if (line.trim() === 'term') stopChild(child);
      else if (line.trim() === 'kill') child.kill('SIGKILL');
    }
    // The runner closed the control pipe: it ended or is gone; nobody reads the connector any more.
    if (child.exitCode === null && child.signalCode === null) stopChild(child);
  })().catch(() => stopChild(child));

  const result = await exit;
  process.off('SIGTERM', onTerm);
  process.off('SIGINT', onTerm);
  control.destroy();
  await writeExit(exitFile, result);
  if (result.error) io.stderr(`sluice connector-pipe (${role}): ${result.error}\n`);
  if (result.code !== null) return result.code;
  return result.signal ? 128 + (osConstants.signals[result.signal as NodeJS.Signals] ?? 0) : 1;
}

function stopChild(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS).unref();
}

/** Written beside and renamed, so the runner never reads half a file. */
async function writeExit(path: string, exit: SyncConnectorExit): Promise<void> {
  await writeFile(`${path}.tmp`, JSON.stringify(exit));
  await rename(`${path}.tmp`, path);
}

async function* controlLines(socket: Socket): AsyncGenerator<string> {
  let buffered = '';
  for await (const chunk of socket) {
    buffered += (chunk as Buffer).toString('utf8');
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      yield buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
    }
  }
  if (buffered) yield buffered;
}
