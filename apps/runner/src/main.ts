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
  runner-install DIR   copy the self-contained runner (sluice and lib/) into DIR
                       (the kubernetes init container)
  help                 show this text

Environment of exec:
  SLUICE_API_URL       base URL of a server's internal API
  SLUICE_RUN_TOKEN     the task run's token for the runner API
  SLUICE_TASK_RUN_ID   the task run to run
`;

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
    case 'exec':
      if (args.includes('--help') || args.includes('-h')) {
        io.stdout(USAGE);
        return 0;
      }
      return loadRunner().runner.runExecCommand({ env: io.env, stderr: io.stderr, args });
    case 'runner-install':
      return install(args[0], io);
    case 'help':
    case '--help':
    case '-h':
      io.stdout(USAGE);
      return 0;
    case undefined:
      io.stderr(USAGE);
      return 2;
    default:
      io.stderr(`sluice: unknown command ${command}\n\n${USAGE}`);
      return 2;
  }
}

async function install(targetDir: string | undefined, io: MainIo): Promise<number> {
  const { locateSelfContainedRunner, runnerInstall, RunnerInstallUnavailableError } = loadRunner().runner;
  if (!targetDir) {
    io.stderr(`sluice runner-install: the target directory is required\n\n${USAGE}`);
    return 2;
  }
  try {
    await runnerInstall(targetDir, locateSelfContainedRunner(io.builtSeaDir ?? join(__dirname, 'sea')));
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
