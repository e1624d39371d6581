import { join } from 'node:path';
// Under plain Node (the runner image's `sluice`, used by images with
// inject_runner: false) this loads the bundle with its code cache that the
// runner package's build writes (@sluice/runner/bundled says why). The
// self-contained build swaps it for sea-runner.ts: its code cache is built in.
import { loadRunner } from '@sluice/runner/bundled';

const USAGE = `Usage: sluice <command>

Commands:
  exec                 run the task of one task run (the runner, started by an executor)
  exec --standby       start, load, then wait for one line on stdin naming the task run
                       (the process executor keeps one ready; it reads none of the variables below)
  runner-install DIR [--sync-layout SYNC_DIR]
                       copy the self-contained runner (sluice and lib/) into DIR
                       (the kubernetes init container); with --sync-layout, also lay out
                       a sync's pipes (FIFOs) in SYNC_DIR (a sync's init container)
  connector-pipe --dir D --role source|destination [-- COMMAND...]
                       run a sync's connector with its stdio on the sync's pipes in D
                       (what a connector's container runs on docker and kubernetes);
                       without COMMAND, the image's AIRBYTE_ENTRYPOINT
  connector test CMD   check that a connector speaks the connector protocol
                       (sluice connector test --help)
  help                 show this text

Environment of exec:
`;

/** The flag the process executor starts a standby runner with (@sluice/protocol's RUNNER_STANDBY_FLAG). */
const STANDBY_FLAG = '--standby';

/** The usage and the runner's variables, as the config package describes them. */
function usage(): string {
  return `${USAGE}${loadRunner().runner.formatVarsHelp('runner')}\n`;
}

/** A wrong invocation: one line on stderr, exit code 2. */
function usageError(io: MainIo, message: string): number {
  io.stderr(`${message}\n`);
  return 2;
}

const isHelp = (arg: string): boolean => arg === '--help' || arg === '-h';

export interface MainIo {
  env: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Where the self-contained runner was built, used when this is not that runner; default dist/sea beside this file. */
  builtSeaDir?: string;
}

const processIo: MainIo = {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Exit codes: the task's own for exec; 1 when the runner failed; 2 for a usage or configuration error. */
export async function main(argv: string[], io: MainIo = processIo): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'exec': {
      if (args.some(isHelp)) {
        io.stdout(usage());
        return 0;
      }
      const unknown = args.find((arg) => arg !== STANDBY_FLAG);
      if (unknown !== undefined) {
        return usageError(io, `sluice exec: unknown argument ${unknown}; see sluice exec --help`);
      }
      return loadRunner().runner.runExecCommand({ env: io.env, stderr: io.stderr, args });
    }
    case 'runner-install':
      if (args.some(isHelp)) {
        io.stdout(usage());
        return 0;
      }
      {
        const parsed = installArguments(args);
        if (typeof parsed === 'string')
          return usageError(io, `sluice runner-install: ${parsed}; see sluice runner-install --help`);
        return install(parsed, io);
      }
    case 'connector-pipe':
      // Only its own options: what follows `--` is the connector's command line.
      if ((args.includes('--') ? args.slice(0, args.indexOf('--')) : args).some(isHelp)) {
        io.stdout(usage());
        return 0;
      }
      return loadRunner().runner.runConnectorPipe(args, { env: io.env, stderr: io.stderr });
    case 'connector':
      return loadRunner().runner.runConnectorCommand(args, io);
    case 'help':
    case '--help':
    case '-h':
      io.stdout(usage());
      return 0;
    case undefined:
      io.stderr(usage());
      return 2;
    default:
      return usageError(io, `sluice: unknown command ${command}; see sluice --help`);
  }
}

interface InstallArguments {
  targetDir: string;
  /** --sync-layout: the sync emptyDir to lay out (docs/connectors.md#sync-on-kubernetes). */
  syncDir: string | null;
}

/** runner-install takes exactly one directory and, optionally, --sync-layout DIR. */
function installArguments(args: string[]): InstallArguments | string {
  const dirs: string[] = [];
  let syncDir: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--sync-layout') {
      const value = args[++i];
      if (!value || value.startsWith('-')) return '--sync-layout needs a directory';
      syncDir = value;
    } else if (arg.startsWith('-')) return `unknown argument ${arg}`;
    else dirs.push(arg);
  }
  if (dirs.length === 0) return 'the target directory is required';
  if (dirs.length > 1) return `expected one target directory, got ${dirs.length}`;
  return { targetDir: dirs[0]!, syncDir };
}

async function install({ targetDir, syncDir }: InstallArguments, io: MainIo): Promise<number> {
  const { locateSelfContainedRunner, runnerInstall, RunnerInstallUnavailableError, createSyncLayout } =
    loadRunner().runner;
  try {
    await runnerInstall(targetDir, locateSelfContainedRunner(io.builtSeaDir ?? join(__dirname, 'sea')));
    if (syncDir) await createSyncLayout(syncDir);
    return 0;
  } catch (error) {
    io.stderr(`sluice runner-install: ${(error as Error).message}\n`);
    return error instanceof RunnerInstallUnavailableError ? error.exitCode : 1;
  }
}

if (require.main === module) {
  // void: resolves to the exit code; a rejection is an uncaught error (stack, exit 1: the runner failed).
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
