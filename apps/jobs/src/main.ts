import { ConfigError, formatVarsHelp, parseEnv, type JobsConfig } from '@sluice/config';
import { startJobsService } from '@sluice/jobs';
import { createLogger, runUntilSignal, type SignalSource } from '@sluice/observability';

export type { SignalSource };

/** Where main reads and writes; tests pass their own. */
export interface MainIo {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Default: process. */
  signals?: SignalSource;
}

/** A stop that takes longer than this is abandoned and the process exits 1. */
const STOP_TIMEOUT_MS = 30_000;

const USAGE = `Usage: sluice jobs [--help]

Runs the background work of a distributed installation: the scheduler, the
heartbeat watchdog, retention and the event consumers, with /live, /ready and
/metrics on INTERNAL_HTTP_SERVER_ADDR. Any number of replicas may run: a
scheduler cycle runs in one of them at a time. A standalone server runs all of
this itself. SIGTERM or SIGINT stops it (exit 0); a second signal, or a stop
that takes longer than ${STOP_TIMEOUT_MS / 1000} s, forces the exit.

Environment:
`;

/** `sluice jobs`. argv[0] is the command name; resolves with the exit code once stopped. */
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
  let config: JobsConfig;
  try {
    config = parseEnv('jobs', io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`${error.message}\n`);
    return 2;
  }
  const log = createLogger({ service: 'jobs', level: config.logLevel, stream: io.stdout });
  try {
    return await runUntilSignal(() => startJobsService(config, { log }), {
      ...(io.signals ? { signals: io.signals } : {}),
      stopTimeoutMs: STOP_TIMEOUT_MS,
      onStopping: (signal) => log.info('stopping', { signal }),
      onStopped: () => log.info('stopped'),
      onSecondSignal: (again) =>
        log.error('second signal; exiting without waiting for the stop', { signal: again }),
      onStopTimeout: (timeoutMs) => log.error('stop did not finish in time; exiting', { timeoutMs }),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.error('sluice jobs could not start', { error: message });
    io.stderr.write(`sluice jobs: ${message}\n`);
    return 1;
  }
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
