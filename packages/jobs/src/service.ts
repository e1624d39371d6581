import express from 'express';
import { migrate, openStore } from '@sluice/store';
import type { JobsConfig } from '@sluice/config';
import { DEFAULT_ENGINE_SETTINGS, Engine } from '@sluice/engine';
import {
  createMetrics,
  httpMetricsMiddleware,
  probeRoutes,
  startHttpServer,
  StopStack,
} from '@sluice/observability';
import { startBackgroundJobs } from './background';
import { errorMessage, type JobsLog } from './log';

export interface JobsServiceOptions {
  log: JobsLog;
}

export interface RunningJobsService {
  /** http://127.0.0.1:<port> of the internal server (/live, /ready, /metrics). */
  internalUrl: string;
  /** Stops the background jobs, the internal server and the store, in that order; never rejects. */
  stop(): Promise<void>;
}

/**
 * `sluice jobs` without its process concerns: migrates (advisory-locked, so
 * replicas may start together), then runs the background jobs and the
 * internal server with /live, /ready (database reachable) and /metrics.
 */
export async function startJobsService(
  config: JobsConfig,
  options: JobsServiceOptions,
): Promise<RunningJobsService> {
  const { log } = options;
  const stoppers = new StopStack(log);
  const stop = (): Promise<void> => stoppers.stopAll();
  try {
    const { applied } = await migrate(config.databaseUrl, { log: (message) => log.info(message) });
    log.info('database migrated', { applied: applied.length });

    const store = openStore(config.databaseUrl, {
      applicationName: 'sluice-jobs',
      preparedStatements: config.databasePreparedStatements,
    });
    stoppers.push(() => store.close());
    const metrics = createMetrics({ service: 'jobs' });

    const app = express();
    app.use(httpMetricsMiddleware(metrics));
    probeRoutes(app, {
      registry: metrics.registry,
      ready: async () => {
        try {
          await store.ping();
          return { ok: true };
        } catch (err) {
          return { ok: false, detail: `database: ${errorMessage(err)}` };
        }
      },
    });
    const internal = await startHttpServer(app, config.internalHttpServerAddr);
    stoppers.push(() => internal.close());

    // No keyring and no JWT secret: the jobs service resolves no secrets and mints no run tokens.
    const engine = new Engine({
      store,
      settings: {
        ...DEFAULT_ENGINE_SETTINGS,
        jwtSecret: '',
        defaultMaxAttempts: config.scheduling.defaultMaxAttempts,
      },
      log,
    });
    const jobs = await startBackgroundJobs({
      store,
      engine,
      scheduling: config.scheduling,
      log,
      metrics,
    });
    stoppers.push(() => jobs.stop());

    const internalUrl = `http://127.0.0.1:${internal.port}`;
    log.info('jobs started', { internal: internalUrl, internalAddress: internal.address });
    return { internalUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
