import type { Server } from 'node:http';
import { Client, type Pool } from 'pg';
import { Router } from 'express';
import { createInternalApp, createPublicApp } from '@sluice/api';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@sluice/bootstrap';
import { createPool, createPrismaClient, migrate, TASK_RUN_QUEUED_CHANNEL } from '@sluice/claim-store';
import type { ServerConfig } from '@sluice/config';
import {
  createDirectExecutorProtocol,
  DEFAULT_ENGINE_SETTINGS,
  Engine,
  EVENTS_CHANNEL,
  RunnerService,
} from '@sluice/engine';
import { createInstance, standaloneSlotGroups } from '@sluice/instance';
import {
  createLogger,
  createMetrics,
  httpMetricsMiddleware,
  probeRoutes,
  registerSecretValue,
  startHttpServer,
} from '@sluice/observability';
import { SecretKeyring } from '@sluice/secrets';
import { standaloneExecutors } from './executors';
import { resolveServerSecrets } from './secrets-source';

/** Calls `wake` each time the engine's work signal fires, until the returned function is called. */
function wakeOnWork(engine: Engine, wake: () => void): () => void {
  let stopped = false;
  void (async () => {
    while (!stopped) if (await engine.workSignal.wait(60_000)) wake();
  })();
  return () => {
    stopped = true;
  };
}

export interface ServerOptions {
  standalone: boolean;
  /** How the process executor starts `sluice exec` (argv). */
  runnerCommand: string[];
  version: string;
}

export interface RunningServer {
  publicUrl: string;
  internalUrl: string;
  databaseUrl: string;
  stop(): Promise<void>;
}

type Stopper = () => Promise<void> | void;

/**
 * LISTEN for work queued and events written by any process on this database,
 * and relay them: to the local instance, to executors long-polling the
 * executor API, and to the local event consumer.
 */
async function relayNotifications(
  url: string,
  engine: Engine,
  log: { warn(m: string, f?: object): void },
): Promise<Client> {
  const client = new Client({ connectionString: url });
  client.on('error', (err) =>
    log.warn('LISTEN connection failed; falling back to polling', { error: err.message }),
  );
  await client.connect();
  client.on('notification', (n) => {
    if (n.channel === TASK_RUN_QUEUED_CHANNEL) engine.workSignal.notify();
    else if (n.channel === EVENTS_CHANNEL) engine.eventSignal.notify();
  });
  await client.query(`LISTEN ${TASK_RUN_QUEUED_CHANNEL}`);
  await client.query(`LISTEN ${EVENTS_CHANNEL}`);
  return client;
}

/**
 * `sluice server` and `sluice server --standalone`: the public API and the
 * internal API; standalone adds the watchdog and an embedded instance with the
 * inline and process executors. Everything started is stopped in reverse
 * order by stop().
 */
export async function startServer(config: ServerConfig, options: ServerOptions): Promise<RunningServer> {
  const log = createLogger({ service: 'server', level: config.logLevel });
  const metrics = createMetrics();
  const stoppers: Stopper[] = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stoppers.reverse()) {
      try {
        await stop();
      } catch (err) {
        log.error('error while stopping', { error: err instanceof Error ? err.message : String(err) });
      }
    }
    stoppers.length = 0;
  };
  try {
    const secrets = resolveServerSecrets(config, options.standalone);
    if (secrets.generatedAt) {
      log.info(secrets.created ? 'generated secrets' : 'using generated secrets', {
        path: secrets.generatedAt,
      });
    }
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      const embedded: EmbeddedDatabase = await startEmbeddedPostgres({
        dataDir: config.dataDir,
        password: secrets.postgresPassword ?? '',
        log: (m) => log.info(m),
      });
      stoppers.push(() => embedded.stop());
      databaseUrl = embedded.url;
      log.info('embedded PostgreSQL started', { dataDir: embedded.dataDir });
    }
    const { applied } = await migrate(databaseUrl, { log: (m) => log.info(m) });
    log.info('database migrated', { applied: applied.length });

    const pool: Pool = createPool(databaseUrl);
    stoppers.push(() => pool.end());
    const prisma = createPrismaClient(databaseUrl);
    stoppers.push(() => prisma.$disconnect());

    const engine = new Engine({
      pool,
      keyring: new SecretKeyring(secrets.masterKeys),
      settings: {
        ...DEFAULT_ENGINE_SETTINGS,
        jwtSecret: secrets.jwtSecret,
        defaultMaxAttempts: config.scheduling.defaultMaxAttempts,
      },
      log,
      onQueued: () => undefined,
      onSecretResolved: registerSecretValue,
    });
    const runner = new RunnerService(engine);

    const ready = async () => {
      try {
        await pool.query('SELECT 1');
        return { ok: true };
      } catch (err) {
        return { ok: false, detail: `database: ${err instanceof Error ? err.message : String(err)}` };
      }
    };
    const probes = Router();
    probeRoutes(probes, { ready, registry: metrics.registry });
    const internalApp = createInternalApp({
      runner,
      artifactMaxBytes: DEFAULT_ENGINE_SETTINGS.runnerLimits.artifactMaxBytes,
      log,
      mount: [httpMetricsMiddleware(metrics), probes],
      // The executor API: refuses every call while PIPELINE_EXECUTOR_API_TOKEN is unset.
      executor: {
        engine,
        apiToken: config.executorApiToken,
        k8sMaxJobs: config.k8s.maxJobs,
        log,
        metrics,
      },
    });
    const publicApp = createPublicApp(
      {
        pool,
        prisma,
        engine,
        keyring: new SecretKeyring(secrets.masterKeys),
        jwtSecret: secrets.jwtSecret,
        executorSilenceTimeoutMs: config.scheduling.executorSilenceTimeout,
        log,
      },
      { beforeRoutes: [httpMetricsMiddleware(metrics)] },
    );
    const internal = await startHttpServer(internalApp, config.internalHttpServerAddr);
    stoppers.push(() => internal.close());
    const pub = await startHttpServer(publicApp, config.httpServerAddr);
    stoppers.push(() => pub.close());
    const publicUrl = `http://127.0.0.1:${pub.port}`;
    const internalUrl = `http://127.0.0.1:${internal.port}`;

    const listener = await relayNotifications(databaseUrl, engine, log);
    stoppers.push(() => listener.end());
    stoppers.push(() => engine.workSignal.close());

    if (options.standalone) {
      // Background jobs of a standalone server: the event consumer and the watchdog.
      const stopConsumer = engine.startEventConsumer({ pollIntervalMs: 1000 });
      stoppers.push(stopConsumer);
      const stopWatchdog = engine.startWatchdog({
        intervalMs: config.scheduling.watchdogInterval,
        heartbeatTimeoutMs: config.scheduling.heartbeatTimeout,
        onFailed: (n) => metrics.watchdogFailuresTotal.inc({ reason: 'lost' }, n),
      });
      stoppers.push(stopWatchdog);
      // The runner reaches this server at SLUICE_API_URL; its default follows the internal port actually bound.
      const runnerApiUrl = config.apiUrl.endsWith(':0') ? internalUrl : config.apiUrl;
      const local = createInstance({
        instanceId: config.instanceId,
        type: 'standalone',
        version: options.version,
        protocol: createDirectExecutorProtocol(engine, { k8sMaxJobs: config.k8s.maxJobs }),
        executors: standaloneExecutors(config, options.runnerCommand),
        pools: config.instance.pools,
        slotGroups: standaloneSlotGroups(config.instance.workerSlots),
        pollIntervalMs: config.instance.queuePollInterval,
        registrationIntervalMs: config.instance.registrationInterval,
        runnerApiUrl,
        log,
        metrics: {
          runningChanged: (executorType, count) =>
            metrics.taskRunsRunning.set({ instance: `${config.instanceId}/${executorType}` }, count),
          claimed: (group, count) => metrics.claimsTotal.inc({ executor_type: group }, count),
        },
      });
      // Wakes on local and relayed queued work (the NOTIFY relay above feeds workSignal).
      const unsubscribe = wakeOnWork(engine, () => local.wake());
      stoppers.push(unsubscribe);
      await local.start();
      stoppers.push(() => local.stop('shutdown'));
      log.info('embedded instance started', {
        instanceId: config.instanceId,
        pools: config.instance.pools,
        workerSlots: config.instance.workerSlots,
      });
    }
    log.info('server started', { standalone: options.standalone, public: publicUrl, internal: internalUrl });
    return { publicUrl, internalUrl, databaseUrl, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

export type { Server };
