import type { ExecutorCommandIo } from '@sluice/executor-runtime';

// `exec` starts once per task run on the process executor: each command loads
// only what it uses, and nothing is imported before the command is known.

/** Where main reads and writes; tests pass their own. */
export type MainIo = ExecutorCommandIo;

const VERSION = process.env.SLUICE_VERSION ?? '0.1.0';

const USAGE = `Usage: sluice docker-executor [--help]
       sluice docker-executor exec      (the runner; the process executor starts it)

Runs an instance with the docker executor (and inline; process only when
SLUICE_EXECUTORS lists it). It never opens the database: it claims task runs,
reports progress and sends logs through a server's internal API
(EXECUTOR_API_URL), and serves /live, /ready and /metrics on
INTERNAL_HTTP_SERVER_ADDR. It does not start without DOCKER_EXECUTOR_OWNER_ID.
SLUICE_EXECUTORS=process runs a process instance on a host without Docker.

Environment:
`;

/**
 * `sluice docker-executor` (argv[0] is the command name) and `exec`, which the
 * process executor runs as `<node> <this file> exec`. Resolves with the exit code.
 */
export async function main(argv: string[], io: MainIo = process): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'exec') {
    const { loadRunner } = await import('@sluice/runner/bundled');
    return loadRunner().runner.runExecCommand({ env: io.env, stderr: (text) => io.stderr.write(text) });
  }
  if (args.includes('--help') || args.includes('-h')) {
    const { formatVarsHelp } = await import('@sluice/config');
    io.stdout.write(`${USAGE}${formatVarsHelp('docker-executor')}\n`);
    return 0;
  }
  if (args.length > 0) {
    io.stderr.write(
      `sluice docker-executor: unknown argument ${args[0]}; see sluice docker-executor --help\n`,
    );
    return 2;
  }
  const { runExecutorCommand } = await import('@sluice/executor-runtime');
  return runExecutorCommand({
    app: 'docker-executor',
    io,
    version: VERSION,
    // The process executor starts the runner as this same program.
    runnerCommand: [process.execPath, __filename, 'exec'],
  });
}

if (require.main === module) {
  // The image runs `node dist/main.js [--help]`; `exec` and the command name are accepted too.
  const args = process.argv.slice(2);
  const argv = args[0] === 'exec' || args[0] === 'docker-executor' ? args : ['docker-executor', ...args];
  main(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
