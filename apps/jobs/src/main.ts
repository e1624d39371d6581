import { ConfigError, formatVarsHelp, parseEnv } from '@sluice/config';

/** Where main reads and writes; tests pass their own. */
export interface MainIo {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const USAGE = `Usage: sluice jobs [--help]

Runs the background work of a distributed installation: the scheduler, the
heartbeat watchdog, retention and the event consumers, with /live, /ready and
/metrics on INTERNAL_HTTP_SERVER_ADDR. A standalone server runs all of this
itself.

Environment:
`;

/** `sluice jobs`. argv[0] is the command name; returns the exit code. */
export async function main(argv: string[], io: MainIo = process): Promise<number> {
  const args = argv.slice(1);
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(`${USAGE}${formatVarsHelp('jobs')}\n`);
    return 0;
  }
  if (args.length > 0) {
    io.stderr.write(`sluice jobs: unknown argument ${args[0]}; see sluice jobs --help\n`);
    return 2;
  }
  try {
    parseEnv('jobs', io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`${error.message}\n`);
    return 2;
  }
  io.stderr.write(
    'sluice jobs is not available yet: the scheduler, watchdog and retention as a service of their own arrive ' +
      'with distributed mode (the distributed-mode issue). Until then run `sluice server --standalone`, which includes them.\n',
  );
  return 2;
}

if (require.main === module) {
  main(['jobs', ...process.argv.slice(2)]).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
