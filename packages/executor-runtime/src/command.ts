import { ConfigError, parseEnv } from '@sluice/config';
import { errorMessage } from '@sluice/executors';
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
  signals?: NodeJS.EventEmitter;
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
 * SIGINT, then stops it. Exit codes: 0 after a clean stop; 2 for a
 * configuration problem (the message names the variable); 1 when the
 * instance could not start or stop; 130 on a second signal.
 */
export async function runExecutorCommand(options: ExecutorCommandOptions): Promise<number> {
  const { app, io } = options;
  const signals = options.signals ?? process;
  let running;
  try {
    // parseEnv reads none of the control plane's variables; startExecutorInstance deletes them first thing.
    running = await startExecutorInstance({
      ...parseConfig(app, io.env),
      version: options.version,
      runnerCommand: options.runnerCommand,
      env: io.env,
      logStream: io.stdout,
    });
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`${err.message}\n`);
      return 2;
    }
    io.stderr.write(`sluice ${app}: could not start: ${errorMessage(err)}\n`);
    return 1;
  }
  const instance = running;
  return new Promise<number>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        resolve(130);
        return;
      }
      stopping = true;
      io.stderr.write(`sluice ${app}: received ${signal}, stopping\n`);
      const force = setTimeout(() => {
        io.stderr.write(`sluice ${app}: stopping took too long, giving up\n`);
        resolve(1);
      }, options.forceExitAfterMs ?? 60_000);
      force.unref();
      instance.stop().then(
        () => {
          clearTimeout(force);
          signals.removeListener('SIGTERM', onSignal);
          signals.removeListener('SIGINT', onSignal);
          resolve(0);
        },
        (err: unknown) => {
          clearTimeout(force);
          io.stderr.write(`sluice ${app}: stop failed: ${errorMessage(err)}\n`);
          resolve(1);
        },
      );
    };
    signals.on('SIGTERM', onSignal);
    signals.on('SIGINT', onSignal);
  });
}
