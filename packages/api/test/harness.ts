import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import request from 'supertest';
import { createUserToken, createRunToken } from '@sluice/auth';
import { claimTaskRuns, createPool, createPrismaClient, Store, type PrismaClient } from '@sluice/store';
import { DEFAULT_ENGINE_SETTINGS, Engine, RunnerService, type EngineSettings } from '@sluice/engine';
import { SecretKeyring } from '@sluice/secrets';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { createInternalApp, createPublicApp, type ExecutorRouterOptions } from '@sluice/api';
import { startHttpServer, type RunningHttpServer } from '@sluice/observability';
import type { Express } from 'express';

export const JWT_SECRET = 'api-test-secret-0123456789';
/** The workspace of the harness's admin and member tokens. */
export const WORKSPACE = 'w';

export interface ApiHarness {
  db: TestDatabase;
  pool: Pool;
  prisma: PrismaClient;
  engine: Engine;
  publicApp: Express;
  internalApp: Express;
  adminToken: string;
  memberToken: string;
  logs: string[];
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Mounts the executor API on the internal app with these options (the engine and log are the harness's). */
  executor?: Omit<ExecutorRouterOptions, 'engine' | 'log'>;
}

/** The public and internal apps over a real PostgreSQL database of their own, in this process. */
export async function startApiHarness(
  settings: Partial<EngineSettings> = {},
  options: HarnessOptions = {},
): Promise<ApiHarness> {
  const db = await createTestDatabase();
  const pool = createPool(db.url);
  const prisma = createPrismaClient(db.url);
  const store = new Store(pool, { databaseUrl: db.url, prisma });
  const logs: string[] = [];
  const log = {
    info: (m: string, f?: object) => logs.push(`${m} ${JSON.stringify(f ?? {})}`),
    warn: (m: string, f?: object) => logs.push(`${m} ${JSON.stringify(f ?? {})}`),
    error: (m: string, f?: object) => logs.push(`${m} ${JSON.stringify(f ?? {})}`),
  };
  const keyring = new SecretKeyring([randomBytes(32)]);
  const engine = new Engine({
    store,
    keyring,
    settings: { ...DEFAULT_ENGINE_SETTINGS, jwtSecret: JWT_SECRET, ...settings },
    log,
  });
  const publicApp = createPublicApp({
    store,
    engine,
    keyring,
    jwtSecret: JWT_SECRET,
    executorSilenceTimeoutMs: 60_000,
    log,
  });
  const internalApp = createInternalApp({
    runner: new RunnerService(engine),
    artifactMaxBytes: DEFAULT_ENGINE_SETTINGS.runnerLimits.artifactMaxBytes,
    log,
    executor: options.executor ? { ...options.executor, engine, log } : undefined,
  });
  return {
    db,
    pool,
    prisma,
    engine,
    publicApp,
    internalApp,
    adminToken: await createUserToken(JWT_SECRET, { user: 'ada', workspace: WORKSPACE, role: 'admin' }),
    memberToken: await createUserToken(JWT_SECRET, { user: 'bob', workspace: WORKSPACE, role: 'member' }),
    logs,
    close: async () => {
      await store.close();
      await db.drop();
    },
  };
}

export function putFlow(h: ApiHarness, ns: string, flow: string, yaml: string) {
  return request(h.publicApp)
    .put(`/api/v1/namespaces/${ns}/flows/${flow}`)
    .set('Authorization', `Bearer ${h.adminToken}`)
    .set('Content-Type', 'application/yaml')
    .send(yaml);
}

export function putSecret(h: ApiHarness, ns: string, name: string, value: string) {
  return request(h.publicApp)
    .put(`/api/v1/namespaces/${ns}/secrets/${name}`)
    .set('Authorization', `Bearer ${h.adminToken}`)
    .send({ value });
}

/** The runner API's `what` of a task run (spec, logs, result, ...). */
export const runnerPath = (id: string, what: string) => `/internal/v1/runner/task-runs/${id}/${what}`;

/** Claims like an instance would, and mints the run token it would hand to the runner. */
export async function claimWithToken(
  h: ApiHarness,
  executorTypes: Array<'process' | 'inline'> = ['process'],
) {
  const rows = await claimTaskRuns(h.pool, {
    ownerId: 'test-instance',
    executorTypes,
    pools: ['default'],
    limit: 10,
  });
  return Promise.all(
    rows.map(async (row) => ({
      row,
      token: await createRunToken(JWT_SECRET, { taskRunId: row.id, fence: row.fence }, row.timeoutMs),
    })),
  );
}

/** Serves an app on 127.0.0.1 at a free port, for tests that need real HTTP (a real fetch client). */
export async function listen(app: Express): Promise<RunningHttpServer & { url: string }> {
  const server = await startHttpServer(app, '127.0.0.1:0');
  return { ...server, url: `http://127.0.0.1:${server.port}` };
}
