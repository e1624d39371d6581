// The entry point of the executor apps. `exec` starts once per task run on the
// process executor: this module imports nothing at load, and each command
// loads only what it uses (`exec` never loads express, winston or zod twice).
import type { ExecutorCommandIo } from './command';
import type { ExecutorApp } from './executor-selection';

/** Where main reads and writes; tests pass their own. */
export type MainIo = ExecutorCommandIo;

export interface ExecutorAppMainOptions {
  app: ExecutorApp;
  /** The --help text, followed by the variables the app reads. */
  usage: string;
  /** The app's own main file: the process executor starts the runner as `<node> <file> exec`. */
  mainFile: string;
  version: string;
}

/**
 * `sluice docker-executor` / `sluice k8s-executor` (argv[0] is the command
 * name) and `exec`. The returned main resolves with the exit code.
 */
export function executorAppMain(
  options: ExecutorAppMainOptions,
): (argv: string[], io?: MainIo) => Promise<number> {
  const { app } = options;
  return async (argv, io = process) => {
    const [command, ...args] = argv;
    if (command === 'exec') {
      const { loadRunner } = await import('@sluice/runner/bundled');
      return loadRunner().runner.runExecCommand({ env: io.env, stderr: (text) => io.stderr.write(text) });
    }
    if (args.includes('--help') || args.includes('-h')) {
      const { formatVarsHelp } = await import('@sluice/config');
      io.stdout.write(`${options.usage}${formatVarsHelp(app)}\n`);
      return 0;
    }
    if (args.length > 0) {
      io.stderr.write(`sluice ${app}: unknown argument ${args[0]}; see sluice ${app} --help\n`);
      return 2;
    }
    const { runExecutorCommand } = await import('./command.js');
    return runExecutorCommand({
      app,
      io,
      version: options.version,
      runnerCommand: [process.execPath, options.mainFile, 'exec'],
    });
  };
}

/**
 * Runs main from the command line and exits with its code. The image runs
 * `node dist/main.js [--help]`; `exec` and the command name are accepted too.
 */
export function runExecutorAppFromCommandLine(
  app: ExecutorApp,
  main: (argv: string[]) => Promise<number>,
  args: string[] = process.argv.slice(2),
): void {
  const argv = args[0] === 'exec' || args[0] === app ? args : [app, ...args];
  main(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
