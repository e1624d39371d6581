import { ConfigError, formatVarsHelp, parseEnv, stripControlPlaneEnv } from '@sluice/config';
import { createLogger } from '@sluice/observability';

/** Where main reads and writes; tests pass their own. */
export interface MainIo {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const USAGE = `Usage: sluice k8s-executor [--help]

Runs an instance with the kubernetes executor (and inline): one Job per task
run in K8S_EXECUTOR_NAMESPACE. It never opens the database: it claims task
runs and reports through a server's internal API (EXECUTOR_API_URL), and
serves /live, /ready and /metrics on INTERNAL_HTTP_SERVER_ADDR. It does not
start without K8S_EXECUTOR_OWNER_ID or K8S_EXECUTOR_OWNER_ID_PREFIX.

Environment:
`;

/** `sluice k8s-executor`. argv[0] is the command name; returns the exit code. */
export async function main(argv: string[], io: MainIo = process): Promise<number> {
  const args = argv.slice(1);
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(`${USAGE}${formatVarsHelp('k8s-executor')}\n`);
    return 0;
  }
  if (args.length > 0) {
    io.stderr.write(`sluice k8s-executor: unknown argument ${args[0]}; see sluice k8s-executor --help\n`);
    return 2;
  }
  // First of all, so that nothing started later (a task above all) can see the control plane's secrets.
  const { removed } = stripControlPlaneEnv(io.env);
  let config;
  try {
    config = parseEnv('k8s-executor', io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`${error.message}\n`);
    return 2;
  }
  const logger = createLogger({ service: 'k8s-executor', level: config.logLevel, stream: io.stdout });
  for (const name of removed) {
    logger.warn(
      `removed ${name} from the environment: an executor must not hold the control plane's secrets`,
      {
        variable: name,
      },
    );
  }
  io.stderr.write(
    'sluice k8s-executor is not available yet: it arrives with the kubernetes executor (the kubernetes executor issue). ' +
      'Until then run `sluice server --standalone`.\n',
  );
  return 2;
}

if (require.main === module) {
  main(['k8s-executor', ...process.argv.slice(2)]).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
