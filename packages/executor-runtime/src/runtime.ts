import type { DockerExecutorConfig, K8sExecutorConfig } from '@sluice/config';
import { createLogger, createMetrics, StopStack, type Logger } from '@sluice/observability';
import { ExecutorApiClient } from '@sluice/protocol';
import { buildInstance, type BuiltInstance, type InstanceDeps } from './build-instance';
import { forgetControlPlaneEnv } from './env-hygiene';
import { serverAnswers, startInternalServer } from './internal-server';

/** The app and its parsed configuration (parseEnv of that app). */
export type ExecutorAppConfig =
  | { app: 'docker-executor'; config: DockerExecutorConfig }
  | { app: 'k8s-executor'; config: K8sExecutorConfig };

export type ExecutorInstanceOptions = ExecutorAppConfig & {
  /** Reported at registration. */
  version: string;
  /** How the process executor starts `sluice exec` (argv). */
  runnerCommand: string[];
  /** This process's environment (process.env): the control plane's secrets are deleted from it. */
  env: NodeJS.ProcessEnv;
  /** Where JSON log lines go; stdout by default. */
  logStream?: NodeJS.WritableStream;
  /** `auto` detection and the engine watch; the default pings the Docker API named by DOCKER_HOST. */
  detection?: InstanceDeps['probes'];
  /** Long-poll the server for queued work (default true); false leaves only the poll timer (benchmarks compare both). */
  wakeOnQueuedWork?: boolean;
  /** Between checks of the executors' engines; default 5 s. */
  engineCheckIntervalMs?: number;
};

export interface RunningExecutorInstance {
  /** The owner ID, which is also the instance's ID in the executor list. */
  instanceId: string;
  /** Port of /live, /ready and /metrics (the bound one when INTERNAL_HTTP_SERVER_ADDR asked for 0). */
  internalPort: number;
  /** Stops claiming, ends local process and inline task runs with instance_shutdown, closes the port. */
  stop(): Promise<void>;
}

/**
 * `sluice docker-executor` and `sluice k8s-executor`: an instance that never
 * opens the database. It claims, reports and registers through the server's
 * executor API (EXECUTOR_API_URL with EXECUTOR_API_TOKEN), is woken by the
 * server's relay of new queued work, and serves /live, /ready and /metrics on
 * INTERNAL_HTTP_SERVER_ADDR. The instance itself comes from buildInstance.
 */
export async function startExecutorInstance(
  options: ExecutorInstanceOptions,
): Promise<RunningExecutorInstance> {
  const { app, config, env } = options;
  const log: Logger = createLogger({ service: app, level: config.logLevel, stream: options.logStream });
  // First: from here on nothing in this process can read the control plane's secrets.
  forgetControlPlaneEnv(env, log);

  const protocol = new ExecutorApiClient({ baseUrl: config.executorApiUrl, token: config.executorApiToken });
  const metrics = createMetrics();
  const deps: InstanceDeps = {
    protocol,
    version: options.version,
    runnerCommand: options.runnerCommand,
    env,
    log,
    metrics,
    ...(options.detection ? { probes: options.detection } : {}),
    ...(options.wakeOnQueuedWork === false ? { relayQueuedWork: false } : {}),
    ...(options.engineCheckIntervalMs !== undefined
      ? { engineCheckIntervalMs: options.engineCheckIntervalMs }
      : {}),
  };
  const built: BuiltInstance =
    app === 'docker-executor'
      ? await buildInstance('docker-executor', options.config, deps)
      : await buildInstance('k8s-executor', options.config, deps);

  const stoppers = new StopStack(log);
  const stopAll = (): Promise<void> => stoppers.stopAll();

  try {
    const internal = await startInternalServer({
      addr: config.internalHttpServerAddr,
      metrics,
      ready: async () => {
        const engines = built.ready();
        if (!engines.ok) return engines;
        return serverAnswers(config.executorApiUrl);
      },
    });
    stoppers.push(() => internal.close());
    // Closed after the instance stopped (which still completes its task runs): aborts the pending long poll.
    stoppers.push(() => protocol.close());
    stoppers.push(() => built.stop());
    await built.start();

    log.info('executor instance started', {
      instanceId: built.instanceId,
      executors: built.executorTypes,
      pools: config.instance.pools,
      server: config.executorApiUrl,
      internalPort: internal.port,
      internalAddress: internal.address,
    });
    let stopping: Promise<void> | null = null;
    return {
      instanceId: built.instanceId,
      internalPort: internal.port,
      stop: () =>
        (stopping ??= stopAll().then(() => {
          log.info('executor instance stopped', { instanceId: built.instanceId });
        })),
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
