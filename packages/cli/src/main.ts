import { ApiError, CliError, UsageError } from './errors';
import type { Command } from './command';
import { processIo, type Io } from './io';

/** name → summary and loader: only the chosen command's module is loaded (start-up time). */
export const CLI_COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  login: {
    summary: 'Check a token against a server and save both for the other commands',
    load: async () => (await import('./commands/login.js')).login,
  },
  apply: {
    summary: 'Push a namespace folder (namespace.yaml, flows/, files/): validate, show the changes, store',
    load: async () => (await import('./commands/apply.js')).apply,
  },
  run: {
    summary: 'Start an execution of <namespace>/<flow>; --follow streams its logs',
    load: async () => (await import('./commands/run.js')).run,
  },
  executions: {
    summary: 'List executions, or get one: sluice executions list|get',
    load: async () => (await import('./commands/executions.js')).executions,
  },
  logs: {
    summary: 'Print the log lines of a task run; -f follows them until it ends',
    load: async () => (await import('./commands/logs.js')).logs,
  },
  cancel: {
    summary: 'Request the cancellation of an execution',
    load: async () => (await import('./commands/cancel.js')).cancel,
  },
};

/**
 * `sluice <command> ...` of the user CLI. Resolves to the exit code: 0, 1 for a
 * failure (the server's error, a failed execution), 2 for a wrong invocation;
 * every error is one line on stderr (docs/cli.md#exit-codes).
 */
export async function cliMain(argv: string[], io: Io = processIo): Promise<number> {
  const [name, ...rest] = argv;
  const entry = name !== undefined && Object.hasOwn(CLI_COMMANDS, name) ? CLI_COMMANDS[name] : undefined;
  if (!entry) {
    io.err(`sluice: unknown command ${JSON.stringify(name ?? '')}; see sluice --help\n`);
    return 2;
  }
  try {
    return await (await entry.load()).run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`sluice ${name}: ${error.message} (see sluice ${name} --help)\n`);
      return 2;
    }
    if (error instanceof ApiError || error instanceof CliError) {
      io.err(`sluice ${name}: ${error.message}\n`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.err(`sluice ${name}: ${message.split('\n')[0]}\n`);
    if (io.env.LOG_LEVEL === 'debug' && error instanceof Error) io.err(`${error.stack}\n`);
    return 1;
  }
}
