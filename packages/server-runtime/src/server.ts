import { Router } from 'express';
import { createInternalApp, createPublicApp } from '@sluice/api';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@sluice/bootstrap';
import { migrate, openStore, startNotifyRelay, TASK_RUN_QUEUED_CHANNEL } from '@sluice/store';
import type { ServerConfig } from '@sluice/config';
import { createDirectExecutorProtocol, DEFAULT_ENGINE_SETTINGS, Engine, RunnerService } from '@sluice/engine';
import { createInstance, standaloneSlotGroups } from '@sluice/instance';
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
import { standaloneExecutors } from './executors';
import { startDockerCleanup } from '@sluice/owner-cleanup';
import { resolveServerSecrets } from './secrets-source';

/** Calls `wake` each time the engine's work signal fires, until the returned function is called. */
function wakeOnWork(engine: Engine, wake: () => void): () => void {
  let stopped = false;
  // void: runs until the returned function stops it; the work signal's wait never rejects.
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
        // Every 10 s (DESIGN.md point 6), but always well inside PIPELINE_HEARTBEAT_TIMEOUT,
        // so a shortened timeout never fails healthy work as lost.
        runnerHeartbeatIntervalMs: Math.min(10_000, Math.floor(config.scheduling.heartbeatTimeout / 3)),
      },
      log,
      onQueued: () => undefined,
      onSecretResolved: registerSecretValue,
    });
    const runner = new RunnerService(engine);

    const ready = async () => {
      try {
        await store.ping();
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
    // executors long-polling the executor API (DESIGN.md point 4).
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
      const embedded = await standaloneExecutors(config, options.runnerCommand);
      const protocol = createDirectExecutorProtocol(engine, { k8sMaxJobs: config.k8s.maxJobs });
      const local = createInstance({
        instanceId: config.instanceId,
        type: 'standalone',
        version: options.version,
        protocol,
        executors: embedded.executors,
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
      if (embedded.docker) {
        // Leftovers of this owner are removed and its still-running containers adopted before the first claim.
        const cleanup = startDockerCleanup({
          docker: embedded.docker.client,
          executor: embedded.docker.executor,
          ownerId: embedded.docker.ownerId,
          protocol,
          ctx: { protocol, runnerApiUrl, log },
          instance: local,
          intervalMs: config.docker.cleanupInterval,
          log,
        });
        stoppers.push(() => cleanup.stop());
        await cleanup.first;
      }
      await local.start();
      stoppers.push(() => local.stop('shutdown'));
      log.info('embedded instance started', {
        instanceId: config.instanceId,
        pools: config.instance.pools,
        workerSlots: config.instance.workerSlots,
        executors: embedded.executors.map((e) => e.type),
      });
    }
    log.info('server started', { standalone: options.standalone, public: publicUrl, internal: internalUrl });
    return { publicUrl, internalUrl, databaseUrl, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
