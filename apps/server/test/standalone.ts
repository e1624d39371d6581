import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createUserToken } from '@sluice/auth';
import { freePort } from '@sluice/testing';

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
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run pnpm build first (pnpm test does)`);
  const [httpPort, internalPort] = [await freePort(), await freePort()];
  const proc = spawn(process.execPath, [MAIN, 'server', '--standalone'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
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
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!out.includes('"server started"')) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`standalone server did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    publicUrl: `http://127.0.0.1:${httpPort}`,
    internalUrl: `http://127.0.0.1:${internalPort}`,
    proc,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
  };
}

export async function adminToken(): Promise<string> {
  return createUserToken(JWT_SECRET, { user: 'e2e', workspace: 'w', role: 'admin' });
}

export interface TaskRunView {
  id: string;
  taskId: string;
  attempt: number;
  state: string;
  reason: string | null;
  executor: { type: string; pool: string; image: string | null };
  externalRef: string | null;
  outputs?: Record<string, string>;
}

export interface ExecutionView {
  id: string;
  state: string;
  taskRuns: TaskRunView[];
}

type Json = Record<string, unknown>;

/** A small public API client. */
export function apiClient(baseUrl: string, token: string) {
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': contentType } : {}),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: res.status, body: json as Json & { [k: string]: unknown } };
  };
  return {
    call,
    putFlow: (ns: string, flow: string, yaml: string) =>
      call('PUT', `/api/v1/namespaces/${ns}/flows/${flow}`, yaml, 'application/yaml'),
    putSecret: (ns: string, name: string, value: string) =>
      call('PUT', `/api/v1/namespaces/${ns}/secrets/${name}`, { value }),
    run: async (ns: string, flow: string) => {
      const res = await call('POST', `/api/v1/namespaces/${ns}/flows/${flow}/executions`);
      if (res.status !== 201) throw new Error(`create execution: ${res.status} ${JSON.stringify(res.body)}`);
      return String(res.body.id);
    },
    execution: async (id: string) =>
      (await call('GET', `/api/v1/executions/${id}`)).body as unknown as ExecutionView,
    logs: async (taskRunId: string) =>
      (await call('GET', `/api/v1/task-runs/${taskRunId}/logs?limit=10000`)).body.lines as Array<{
        seq: number;
        stream: string;
        line: string;
      }>,
    /** Polls until the execution is in one of the states (or the predicate holds). */
    waitFor: async (id: string, until: (e: ExecutionView) => boolean, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const e = (await call('GET', `/api/v1/executions/${id}`)).body as unknown as ExecutionView;
        if (until(e)) return e;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting; execution is ${JSON.stringify(e, null, 2)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

export const ended = (e: ExecutionView) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(e.state);
