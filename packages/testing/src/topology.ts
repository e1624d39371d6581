/// <reference types="jest" />
// useTopology registers jest hooks (beforeAll/afterAll): only test files import this.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createUserToken } from '@sluice/auth';
import { createTestDatabase, type TestDatabase } from './databases';
import { freePort } from './postgres';
import { apiClient, baseEnv, startApp, type AppProcess } from './processes';

/**
 * A distributed topology of real processes for end-to-end tests: a plain
 * `sluice server` (no embedded instance) on a test database, `sluice jobs`
 * when a test needs executions to advance, and executor instances
 * (`sluice docker-executor`, `sluice k8s-executor`) that reach the server
 * only through its executor API. Every app starts as an operator starts it,
 * `node bin/sluice.cjs <command>` on the built apps: this test-only library
 * never imports an app.
 */

/** The one entry point the apps start through (`node bin/sluice.cjs <command>`). */
export const SLUICE = join(__dirname, '..', '..', '..', 'bin', 'sluice.cjs');

/** The executor apps, and the variable each reads its owner ID from. */
const OWNER_VARIABLE = {
  'docker-executor': 'DOCKER_EXECUTOR_OWNER_ID',
  'k8s-executor': 'K8S_EXECUTOR_OWNER_ID',
} as const;
export type ExecutorCommand = keyof typeof OWNER_VARIABLE;

export const JWT_SECRET = `e2e-${randomBytes(24).toString('hex')}`;
export const MASTER_KEY = randomBytes(32).toString('base64');
export const EXECUTOR_TOKEN = `executor-${randomBytes(16).toString('hex')}`;

/** The ports of a server's public API and internal API. */
export interface ServerPorts {
  http: number;
  internal: number;
}

export interface ServerProcess extends AppProcess {
  publicUrl: string;
  internalUrl: string;
  ports: ServerPorts;
}

/** `sluice server` with `args`, on the given loopback ports, against `databaseUrl`. */
async function startServerProcess(
  args: string[],
  databaseUrl: string,
  ports: ServerPorts,
  env: Record<string, string>,
): Promise<ServerProcess> {
  const app = await startApp({
    main: SLUICE,
    args,
    env: {
      ...baseEnv(),
      SLUICE_DATABASE_URL: databaseUrl,
      AUTH_JWT_SECRET: JWT_SECRET,
      SLUICE_MASTER_KEYS: MASTER_KEY,
      HTTP_SERVER_ADDR: `127.0.0.1:${ports.http}`,
      INTERNAL_HTTP_SERVER_ADDR: `127.0.0.1:${ports.internal}`,
      LOG_LEVEL: 'debug',
      ...env,
    },
    readyWhen: '"server started"',
  });
  return {
    ...app,
    publicUrl: `http://127.0.0.1:${ports.http}`,
    internalUrl: `http://127.0.0.1:${ports.internal}`,
    ports,
  };
}

/**
 * `sluice server` (distributed: public API and internal API only), on free
 * ports unless `ports` are given (a restart at the address clients know).
 */
export async function startServer(
  databaseUrl: string,
  env: Record<string, string> = {},
  ports?: ServerPorts,
): Promise<ServerProcess> {
  const chosen = { http: ports?.http ?? (await freePort()), internal: ports?.internal ?? (await freePort()) };
  return startServerProcess(['server'], databaseUrl, chosen, {
    PIPELINE_EXECUTOR_API_TOKEN: EXECUTOR_TOKEN,
    SLUICE_INSTANCE_ID: `server-${randomBytes(4).toString('hex')}`,
    ...env,
  });
}

/**
 * `sluice server --standalone` (everything in one process: the embedded
 * instance, the jobs and both APIs) on free loopback ports, against the given
 * database.
 */
export async function startStandalone(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const ports = { http: await freePort(), internal: await freePort() };
  return startServerProcess(['server', '--standalone'], databaseUrl, ports, {
    SLUICE_INSTANCE_ID: `e2e-${randomBytes(4).toString('hex')}`,
    SLUICE_QUEUE_POLL_INTERVAL: '250ms',
    PIPELINE_JOB_WATCHDOG_INTERVAL: '1s',
    ...env,
  });
}

/**
 * An executor app (`sluice docker-executor` unless `command` says otherwise)
 * with the process executor, talking to the server's internal API.
 */
export async function startExecutor(
  server: Pick<ServerProcess, 'internalUrl'>,
  ownerId: string,
  env: Record<string, string> = {},
  command: ExecutorCommand = 'docker-executor',
): Promise<AppProcess> {
  return startApp({
    main: SLUICE,
    args: [command],
    env: {
      ...baseEnv(),
      SLUICE_EXECUTORS: 'process',
      [OWNER_VARIABLE[command]]: ownerId,
      // A process-only instance registers under SLUICE_INSTANCE_ID, a docker one under its owner ID: the same here.
      SLUICE_INSTANCE_ID: ownerId,
      EXECUTOR_API_URL: server.internalUrl,
      EXECUTOR_API_TOKEN: EXECUTOR_TOKEN,
      INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0',
      SLUICE_QUEUE_POLL_INTERVAL: '250ms',
      LOG_LEVEL: 'debug',
      ...env,
    },
    readyWhen: '"executor instance started"',
  });
}

/** `sluice jobs`: scheduler, watchdog, retention and the event consumers that advance executions. */
export async function startJobs(databaseUrl: string, env: Record<string, string> = {}): Promise<AppProcess> {
  return startApp({
    main: SLUICE,
    args: ['jobs'],
    env: {
      ...baseEnv(),
      SLUICE_DATABASE_URL: databaseUrl,
      INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0',
      LOG_LEVEL: 'debug',
      ...env,
    },
    readyWhen: 'jobs started',
  });
}

export async function userApi(server: Pick<ServerProcess, 'publicUrl'>, role: 'admin' | 'member') {
  const token = await createUserToken(JWT_SECRET, { user: `e2e-${role}`, workspace: 'w', role });
  return apiClient(server.publicUrl, token);
}

/** The JSON log lines a process printed (other lines skipped). */
export function logLines(output: string): Array<Record<string, unknown>> {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** Runs `wait`; when it fails, the error carries the last lines each process printed (why nothing happened). */
export async function explained<T>(
  processes: Record<string, AppProcess>,
  wait: () => Promise<T>,
): Promise<T> {
  try {
    return await wait();
  } catch (err) {
    const tails = Object.entries(processes).map(
      ([name, p]) => `--- ${name} (last lines) ---\n${p.output().split('\n').slice(-25).join('\n')}`,
    );
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${tails.join('\n')}`);
  }
}

/** One test file's processes, filled in by its beforeAll (see useTopology). */
export interface Topology {
  db: TestDatabase;
  /** Assignable: a test that restarts the server puts the new one here, and afterAll stops it. */
  server: ServerProcess;
  /** null when the file runs without `sluice jobs`. */
  jobs: AppProcess | null;
  executor: AppProcess;
  /** The processes whose output `explained` prints when a step fails. */
  everything(): Record<string, AppProcess>;
}

/**
 * Registers the file's beforeAll/afterAll: its own database, a server, `sluice
 * jobs` when `jobsEnv` is given, and one executor; afterwards everything is
 * stopped, `cleanup` runs and the database is dropped.
 */
export function useTopology(options: {
  serverEnv?: Record<string, string>;
  /** Variables of a `sluice jobs`; absent: no jobs process. */
  jobsEnv?: Record<string, string>;
  startExecutor: (server: ServerProcess) => Promise<AppProcess>;
  /** After every process stopped, before the database is dropped. */
  cleanup?: () => Promise<void>;
}): Topology {
  // Every field is set in beforeAll, before any test reads it.
  const topology = { jobs: null } as Topology;
  topology.everything = () => ({
    executor: topology.executor,
    server: topology.server,
    ...(topology.jobs ? { jobs: topology.jobs } : {}),
  });
  beforeAll(async () => {
    topology.db = await createTestDatabase();
    topology.server = await startServer(topology.db.url, options.serverEnv);
    if (options.jobsEnv) topology.jobs = await startJobs(topology.db.url, options.jobsEnv);
    topology.executor = await options.startExecutor(topology.server);
  }, 120_000);
  afterAll(async () => {
    await topology.executor?.stop();
    await topology.jobs?.stop();
    await topology.server?.stop();
    await options.cleanup?.();
    await topology.db?.drop();
  });
  return topology;
}
