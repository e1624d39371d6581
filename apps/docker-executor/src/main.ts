import { ConfigError, formatVarsHelp, parseEnv, stripControlPlaneEnv } from '@sluice/config';
import { createLogger } from '@sluice/observability';

/** Where main reads and writes; tests pass their own. */
export interface MainIo {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const USAGE = `Usage: sluice docker-executor [--help]

Runs an instance with the docker executor (and inline; process only when
SLUICE_EXECUTORS lists it). It never opens the database: it claims task runs,
reports progress and sends logs through a server's internal API
(EXECUTOR_API_URL), and serves /live, /ready and /metrics on
INTERNAL_HTTP_SERVER_ADDR. It does not start without DOCKER_EXECUTOR_OWNER_ID.

Environment:
`;

/** `sluice docker-executor`. argv[0] is the command name; returns the exit code. */
export async function main(argv: string[], io: MainIo = process): Promise<number> {
  const args = argv.slice(1);
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(`${USAGE}${formatVarsHelp('docker-executor')}\n`);
    return 0;
  }
  if (args.length > 0) {
    io.stderr.write(
      `sluice docker-executor: unknown argument ${args[0]}; see sluice docker-executor --help\n`,
    );
    return 2;
  }
  // First of all, so that nothing started later (a task above all) can see the control plane's secrets.
  const { removed } = stripControlPlaneEnv(io.env);
  let config;
  try {
    config = parseEnv('docker-executor', io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`${error.message}\n`);
    return 2;
  }
  const logger = createLogger({ service: 'docker-executor', level: config.logLevel, stream: io.stdout });
  for (const name of removed) {
    logger.warn(
      `removed ${name} from the environment: an executor must not hold the control plane's secrets`,
      {
        variable: name,
      },
    );
  }
  io.stderr.write(
    'sluice docker-executor is not available yet: it arrives with the docker executor (the docker executor issue). ' +
      'Until then run `sluice server --standalone`.\n',
  );
  return 2;
}

if (require.main === module) {
  main(['docker-executor', ...process.argv.slice(2)]).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
