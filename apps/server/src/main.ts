// Each command loads only what it uses, and nothing is imported before the
// command is known: `exec` starts once per task run on the process executor,
// and must not pay for express, Prisma and the engine (nor for zod twice).

const VERSION = process.env.SLUICE_VERSION ?? '0.1.0';

const USAGE = `usage:
  sluice server [--standalone]   public API + internal API; --standalone adds the
                                 background jobs and an embedded instance (inline +
                                 process executors) and, without SLUICE_DATABASE_URL,
                                 an embedded PostgreSQL under SLUICE_DATA_DIR
  sluice token create ...        print a user JWT (see: sluice token --help)
  sluice exec                    the runner (normally started by an executor)

Process tasks run on this server's host. A server running as root runs them as
SLUICE_PROCESS_TASK_USER (default nobody), which cannot read SLUICE_DATA_DIR; a
server running as another user runs them as itself: they can read what it can,
SLUICE_DATA_DIR included. namespace.yaml allowed_executors keeps a namespace off
the process executor (docs/process-executor.md).

Environment (also in the README's table):
`;

/** One line on stderr, exit code 2: what a wrong invocation gets (no usage dump, no stack). */
function usageError(message: string): number {
  process.stderr.write(`${message}\n`);
  return 2;
}

async function printUsage(): Promise<void> {
  const { formatVarsHelp } = await import('@sluice/config');
  process.stdout.write(`${USAGE}${formatVarsHelp('server')}\n`);
}

/** A stop that takes longer than this is abandoned and the process exits 1. */
const STOP_TIMEOUT_MS = 60_000;

async function serverCommand(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    await printUsage();
    return 0;
  }
  const unknown = args.filter((a) => a !== '--standalone');
  if (unknown.length > 0) {
    return usageError(`sluice server: unknown argument ${unknown[0]}; see sluice server --help`);
  }
  const standalone = args.includes('--standalone');
  const { parseEnv } = await import('@sluice/config');
  const config = parseEnv('server', process.env, { standalone });
  // The process executor starts the runner as this same program: `<node> <this file> exec`.
  const runnerCommand = [process.execPath, __filename, 'exec'];
  const [{ startServer }, { runUntilSignal }] = await Promise.all([
    import('@sluice/server-runtime'),
    import('@sluice/observability'),
  ]);
  // SIGTERM/SIGINT stop it; a second one, or a stop that hangs, forces the exit.
  return runUntilSignal(() => startServer(config, { standalone, runnerCommand, version: VERSION }), {
    stopTimeoutMs: STOP_TIMEOUT_MS,
    onStopping: (signal) => process.stderr.write(`received ${signal}, stopping\n`),
  });
}

async function execCommand(): Promise<number> {
  const { loadRunner } = await import('@sluice/runner/bundled');
  return loadRunner().runner.runExecCommand({
    env: process.env,
    stderr: (text) => process.stderr.write(text),
  });
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'server':
        return await serverCommand(rest);
      case 'token':
        return await (await import('./token.js')).tokenCommand(rest, process.env);
      case 'exec':
        return await execCommand();
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        await printUsage();
        return command === undefined ? 2 : 0;
      default:
        return usageError(`sluice: unknown command ${command}; see sluice --help`);
    }
  } catch (err) {
    const { ConfigError, describeError } = await import('@sluice/config');
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    process.stderr.write(`sluice ${command}: ${describeError(err)}\n`);
    if (process.env.LOG_LEVEL === 'debug' && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    return 1;
  }
}

if (require.main === module) {
  // void: main catches its own errors and resolves to the exit code; nothing is left to await.
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
