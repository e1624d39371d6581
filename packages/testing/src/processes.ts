import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/** A built app running as a real child process, for end-to-end tests. */
export interface AppProcess {
  proc: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Resolves once `text` appeared in the output; rejects when the process exits or the time is up. */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  /** Sends the signal (unless the process has exited) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartAppOptions {
  /** The built entry point, e.g. apps/server/dist/main.js. */
  main: string;
  args: string[];
  /** The whole environment of the child (nothing is inherited); see `baseEnv`. */
  env: Record<string, string>;
  /** Resolve once this appears in the output (a log message such as `"server started"`). */
  readyWhen?: string;
  /** Default 30 s. */
  readyTimeoutMs?: number;
}

/** PATH and HOME of the test process: what a child needs to find `sh` and a home directory. */
export function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `node <main> <args>` with exactly `env`, collects its output, and
 * (with `readyWhen`) waits until it says it is ready. A process that exits or
 * stays silent is killed and the error carries its output.
 */
export async function startApp(options: StartAppOptions): Promise<AppProcess> {
  if (!existsSync(options.main)) {
    throw new Error(`${options.main} is missing: run pnpm build first (pnpm test does)`);
  }
  const proc = spawn(process.execPath, [options.main, ...options.args], {
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  proc.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const app: AppProcess = {
    proc,
    output: () => out,
    exited,
    async waitForOutput(text, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!out.includes(text)) {
        if (proc.exitCode !== null || proc.signalCode !== null) {
          throw new Error(
            `${options.main} exited (${proc.exitCode ?? proc.signalCode}) before printing ${text}:\n${out}`,
          );
        }
        if (Date.now() > deadline)
          throw new Error(`${options.main} did not print ${text} within ${timeoutMs} ms:\n${out}`);
        await sleep(50);
      }
    },
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
  if (options.readyWhen !== undefined) {
    try {
      await app.waitForOutput(options.readyWhen, options.readyTimeoutMs);
    } catch (err) {
      proc.kill('SIGKILL');
      throw err;
    }
  }
  return app;
}

export interface TaskRunView {
  id: string;
  taskId: string;
  attempt: number;
  state: string;
  reason: string | null;
  executor: { type: string; pool: string; image: string | null };
  externalRef: string | null;
  ownerId: string | null;
  outputs?: Record<string, string>;
}

export interface ExecutionView {
  id: string;
  state: string;
  taskRuns: TaskRunView[];
}

export const ended = (e: ExecutionView) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(e.state);

type Json = Record<string, unknown>;

/** A small client of the public API, authenticated with a user token. */
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
  const execution = async (id: string) =>
    (await call('GET', `/api/v1/executions/${id}`)).body as unknown as ExecutionView;
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
    execution,
    logs: async (taskRunId: string) =>
      (await call('GET', `/api/v1/task-runs/${taskRunId}/logs?limit=10000`)).body.lines as Array<{
        seq: number;
        stream: string;
        line: string;
      }>,
    /** Polls until the predicate holds for the execution. */
    waitFor: async (id: string, until: (e: ExecutionView) => boolean, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const e = await execution(id);
        if (until(e)) return e;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting; execution is ${JSON.stringify(e, null, 2)}`);
        await sleep(100);
      }
    },
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

/** Whether `pid` runs: alive, and not a zombie that nobody reaped yet (dead for a test's purposes). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
}
