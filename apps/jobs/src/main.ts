import { ConfigError, formatVarsHelp, parseEnv, type JobsConfig } from '@sluice/config';
import { startJobsService, type RunningJobsService } from '@sluice/jobs';
import { createLogger } from '@sluice/observability';

/** Where SIGTERM/SIGINT arrive: the process itself, or an emitter of the caller's (tests). */
export interface SignalSource {
  on(event: 'SIGTERM' | 'SIGINT', listener: (signal: NodeJS.Signals) => void): unknown;
  off(event: 'SIGTERM' | 'SIGINT', listener: (signal: NodeJS.Signals) => void): unknown;
}

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

interface SignalWatch {
  /** The first SIGTERM/SIGINT. */
  first: Promise<NodeJS.Signals>;
  /** A second one: stop waiting for the stop. */
  second: Promise<NodeJS.Signals>;
  dispose(): void;
}

/** Listens from the start, so a signal that arrives during start-up stops the service as soon as it is up. */
function watchSignals(signals: SignalSource): SignalWatch {
  const received: Array<(signal: NodeJS.Signals) => void> = [];
  const first = new Promise<NodeJS.Signals>((resolve) => received.push(resolve));
  const second = new Promise<NodeJS.Signals>((resolve) => received.push(resolve));
  const onSignal = (signal: NodeJS.Signals) => received.shift()?.(signal);
  signals.on('SIGTERM', onSignal);
  signals.on('SIGINT', onSignal);
  return {
    first,
    second,
    dispose: () => {
      signals.off('SIGTERM', onSignal);
      signals.off('SIGINT', onSignal);
    },
  };
}

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
  const watch = watchSignals(io.signals ?? process);
  try {
    let service: RunningJobsService;
    try {
      service = await startJobsService(config, { log });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log.error('sluice jobs could not start', { error: message });
      io.stderr.write(`sluice jobs: ${message}\n`);
      return 1;
    }
    const signal = await watch.first;
    log.info('stopping', { signal });
    let force: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      service.stop().then(() => 0),
      watch.second.then((again) => {
        log.error('second signal; exiting without waiting for the stop', { signal: again });
        return 130;
      }),
      new Promise<number>((resolve) => {
        force = setTimeout(() => {
          log.error('stop did not finish in time; exiting', { timeoutMs: STOP_TIMEOUT_MS });
          resolve(1);
        }, STOP_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(force);
    if (code === 0) log.info('stopped');
    return code;
  } finally {
    watch.dispose();
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
