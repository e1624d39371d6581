import { ConfigError, parseEnv } from '@sluice/config';
import { errorMessage } from '@sluice/executors';
import { runUntilSignal, type SignalSource } from '@sluice/observability';
import type { ExecutorApp } from './executor-selection';
import { startExecutorInstance, type ExecutorAppConfig } from './runtime';

/** Where an app's main reads and writes; tests pass their own. */
export interface ExecutorCommandIo {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export interface ExecutorCommandOptions {
  app: ExecutorApp;
  io: ExecutorCommandIo;
  version: string;
  runnerCommand: string[];
  /** Where SIGTERM and SIGINT arrive; default `process`. */
  signals?: SignalSource;
  /** A stop slower than this gives up with exit code 1. Default 60 s. */
  forceExitAfterMs?: number;
}

function parseConfig(app: ExecutorApp, env: NodeJS.ProcessEnv): ExecutorAppConfig {
  return app === 'docker-executor'
    ? { app, config: parseEnv('docker-executor', env) }
    : { app, config: parseEnv('k8s-executor', env) };
}

/**
 * Runs `sluice docker-executor` / `sluice k8s-executor` until SIGTERM or
 * SIGINT, then stops it (runUntilSignal). Exit codes: 0 after a clean stop; 2
 * for a configuration problem (the message names the variable); 1 when the
 * instance could not start or stop; 130 on a second signal.
 */
export async function runExecutorCommand(options: ExecutorCommandOptions): Promise<number> {
  const { app, io } = options;
  const say = (text: string) => io.stderr.write(`sluice ${app}: ${text}\n`);
  try {
    return await runUntilSignal(
      // parseEnv reads none of the control plane's variables; startExecutorInstance deletes them first thing.
      () =>
        startExecutorInstance({
          ...parseConfig(app, io.env),
          version: options.version,
          runnerCommand: options.runnerCommand,
          env: io.env,
          logStream: io.stdout,
        }),
      {
        ...(options.signals ? { signals: options.signals } : {}),
        stopTimeoutMs: options.forceExitAfterMs ?? 60_000,
        onStopping: (signal) => say(`received ${signal}, stopping`),
        onStopTimeout: () => say('stopping took too long, giving up'),
        onStopFailed: (err) => say(`stop failed: ${errorMessage(err)}`),
      },
    );
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`${err.message}\n`);
      return 2;
    }
    say(`could not start: ${errorMessage(err)}`);
    return 1;
  }
}
