import { Router } from 'express';
import { createInternalApp, createPublicApp } from '@sluice/api';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@sluice/bootstrap';
import { migrate, openStore, startNotifyRelay, TASK_RUN_QUEUED_CHANNEL } from '@sluice/store';
import type { ServerConfig } from '@sluice/config';
import { createDirectExecutorProtocol, DEFAULT_ENGINE_SETTINGS, Engine, RunnerService } from '@sluice/engine';
import { buildInstance, type BuiltInstance } from '@sluice/executor-runtime';
import { startBackgroundJobs } from '@sluice/jobs';
import {
  createLogger,
  createMetrics,
  httpMetricsMiddleware,
  probeRoutes,
  registerSecretValue,
  startHttpServer,
  StopStack,
} from '@sluice/observability';
import { SecretKeyring } from '@sluice/secrets';
import { resolveServerSecrets } from './secrets-source';

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

/**
 * `sluice server` and `sluice server --standalone`: the public API and the
 * internal API; standalone adds the background jobs (scheduler, watchdog,
 * retention, event consumers) and an embedded instance with the inline and
 * process executors. Everything started is stopped in reverse
 * order by stop().
 */
export async function startServer(config: ServerConfig, options: ServerOptions): Promise<RunningServer> {
  const log = createLogger({ service: 'server', level: config.logLevel });
  const metrics = createMetrics();
  const stoppers = new StopStack(log);
  const stopAll = (): Promise<void> => stoppers.stopAll();
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

    const store = openStore(databaseUrl, { preparedStatements: config.databasePreparedStatements });
    stoppers.push(() => store.close());

    const engine = new Engine({
      store,
      keyring: new SecretKeyring(secrets.masterKeys),
      settings: {
        ...DEFAULT_ENGINE_SETTINGS,
        jwtSecret: secrets.jwtSecret,
        defaultMaxAttempts: config.scheduling.defaultMaxAttempts,
        // Every 10 s (docs/decisions.md §6), but always well inside PIPELINE_HEARTBEAT_TIMEOUT,
        // so a shortened timeout never fails healthy work as lost.
        runnerHeartbeatIntervalMs: Math.min(10_000, Math.floor(config.scheduling.heartbeatTimeout / 3)),
      },
      log,
      onQueued: () => undefined,
      onSecretResolved: registerSecretValue,
    });
    const runner = new RunnerService(engine);

    // Set once the embedded instance is built: not ready while one of its executors' engines does not answer.
    let embedded: BuiltInstance | null = null;
    const ready = async () => {
      try {
        await store.ping();
      } catch (err) {
        return { ok: false, detail: `database: ${err instanceof Error ? err.message : String(err)}` };
      }
      return embedded?.ready() ?? { ok: true };
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
        store,
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

    // Work queued by any process on this database wakes local instances and
    // executors long-polling the executor API (docs/decisions.md §4).
    const relay = startNotifyRelay({
      databaseUrl,
      channels: { [TASK_RUN_QUEUED_CHANNEL]: () => engine.workSignal.notify() },
      log,
    });
    stoppers.push(() => relay.stop());
    stoppers.push(() => engine.workSignal.close());
    await relay.firstAttempt;

    if (options.standalone) {
      // What `sluice jobs` runs in distributed mode: scheduler, watchdog, retention, event consumers.
      const jobs = await startBackgroundJobs({
        store,
        engine,
        scheduling: config.scheduling,
        log,
        metrics,
      });
      stoppers.push(() => jobs.stop());
      // The runner reaches this server at SLUICE_API_URL; its default follows the internal port actually bound.
      const runnerApiUrl = config.apiUrl.endsWith(':0') ? internalUrl : config.apiUrl;
      // The instance talks to this process's engine directly (the executors cannot tell it from the HTTP client).
      const built = await buildInstance('standalone', config, {
        protocol: createDirectExecutorProtocol(engine, { k8sMaxJobs: config.k8s.maxJobs }),
        version: options.version,
        runnerCommand: options.runnerCommand,
        env: process.env,
        log,
        metrics,
        runnerApiUrl,
      });
      embedded = built;
      stoppers.push(() => built.stop());
      await built.start();
      log.info('embedded instance started', {
        instanceId: built.instanceId,
        pools: config.instance.pools,
        workerSlots: config.instance.workerSlots,
        executors: built.executorTypes,
      });
    }
    // public/internal are URLs that reach the listeners from this host; the addresses are what was bound.
    log.info('server started', {
      standalone: options.standalone,
      public: publicUrl,
      internal: internalUrl,
      publicAddress: pub.address,
      internalAddress: internal.address,
    });
    return { publicUrl, internalUrl, databaseUrl, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
