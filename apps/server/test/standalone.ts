import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createUserToken } from '@sluice/auth';
import { baseEnv, freePort, startApp } from '@sluice/testing';

export { apiClient, ended } from '@sluice/testing';
export type { ExecutionView, TaskRunView } from '@sluice/testing';

const MAIN = join(__dirname, '..', 'dist', 'main.js');

export const JWT_SECRET = `e2e-${randomBytes(24).toString('hex')}`;
export const MASTER_KEY = randomBytes(32).toString('base64');

export interface StandaloneServer {
  publicUrl: string;
  internalUrl: string;
  proc: ChildProcess;
  /** Everything the server printed so far (stdout and stderr). */
  output(): string;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `sluice server --standalone` as a real child process (the built app), on
 * loopback ports of its own, against the given database.
 */
export async function startStandalone(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<StandaloneServer> {
  const [httpPort, internalPort] = [await freePort(), await freePort()];
  const app = await startApp({
    main: MAIN,
    args: ['server', '--standalone'],
    env: {
      ...baseEnv(),
      SLUICE_DATABASE_URL: databaseUrl,
      AUTH_JWT_SECRET: JWT_SECRET,
      SLUICE_MASTER_KEYS: MASTER_KEY,
      HTTP_SERVER_ADDR: `127.0.0.1:${httpPort}`,
      INTERNAL_HTTP_SERVER_ADDR: `127.0.0.1:${internalPort}`,
      SLUICE_INSTANCE_ID: `e2e-${randomBytes(4).toString('hex')}`,
      SLUICE_QUEUE_POLL_INTERVAL: '250ms',
      PIPELINE_JOB_WATCHDOG_INTERVAL: '1s',
      LOG_LEVEL: 'debug',
      ...env,
    },
    readyWhen: '"server started"',
  });
  return {
    publicUrl: `http://127.0.0.1:${httpPort}`,
    internalUrl: `http://127.0.0.1:${internalPort}`,
    proc: app.proc,
    output: app.output,
    stop: app.stop,
  };
}

export async function adminToken(): Promise<string> {
  return createUserToken(JWT_SECRET, { user: 'e2e', workspace: 'w', role: 'admin' });
}
