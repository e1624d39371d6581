import type { DockerExecutorConfig, K8sExecutorConfig } from '@sluice/config';
import {
  createDockerClient,
  DockerExecutor,
  type DockerExecutorOptions,
  type Executor,
  type ExecutorContext,
} from '@sluice/executors';
import { createInstance, type SlotGroupConfig } from '@sluice/instance';
import { createLogger, createMetrics, StopStack, type Logger } from '@sluice/observability';
import { startDockerCleanup } from '@sluice/owner-cleanup';
import { ExecutorApiClient, type ExecutorType } from '@sluice/protocol';
import { pingDocker } from './docker-ping';
import { forgetControlPlaneEnv } from './env-hygiene';
import { buildExecutors, resolveExecutorTypes, type DetectionProbes } from './executor-selection';
import { serverAnswers, startInternalServer } from './internal-server';
import { dockerExecutorSlotGroups, k8sExecutorSlotGroups } from './slot-groups';
import { wakeOnQueuedWork } from './work-signal';

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
  /** `auto` detection; the default pings the Docker API named by DOCKER_HOST. */
  detection?: Omit<DetectionProbes, 'env'>;
  /** Long-poll the server for queued work (default true); false leaves only the poll timer (benchmarks compare both). */
  wakeOnQueuedWork?: boolean;
};

export interface RunningExecutorInstance {
  /** The owner ID, which is also the instance's ID in the executor list. */
  instanceId: string;
  /** Port of /live, /ready and /metrics (the bound one when INTERNAL_HTTP_SERVER_ADDR asked for 0). */
  internalPort: number;
  /** Stops claiming, ends local process and inline task runs with instance_shutdown, closes the port. */
  stop(): Promise<void>;
}

/** What differs between the two apps once their configuration is read. */
interface AppShape {
  instanceId: string;
  slotGroups: SlotGroupConfig[];
  /** What runners started by this instance call (SLUICE_API_URL). */
  runnerApiUrl: string;
  resourceDefaults: Record<string, string>;
}

function appShape(options: ExecutorAppConfig): AppShape {
  const defaults = options.config.instance.runtimeDefaults;
  if (options.app === 'docker-executor') {
    const { config } = options;
    return {
      instanceId: config.docker.ownerId,
      slotGroups: dockerExecutorSlotGroups(config),
      runnerApiUrl: config.apiUrl,
      resourceDefaults: { ...defaults },
    };
  }
  const { config } = options;
  return {
    instanceId: config.k8s.ownerId,
    slotGroups: k8sExecutorSlotGroups(config),
    // Task pods and local runners alike reach the server at K8S_EXECUTOR_SERVER_ADDR (default EXECUTOR_API_URL).
    runnerApiUrl: config.k8s.serverAddr,
    resourceDefaults: {
      cpu: defaults.cpu ?? config.k8s.defaultCpu,
      memory: defaults.memory ?? config.k8s.defaultMemory,
    },
  };
}

/**
 * `sluice docker-executor` and `sluice k8s-executor`: an instance that never
 * opens the database. It claims, reports and registers through the server's
 * executor API (EXECUTOR_API_URL with EXECUTOR_API_TOKEN), is woken by the
 * server's relay of new queued work, and serves /live, /ready and /metrics on
 * INTERNAL_HTTP_SERVER_ADDR.
 */
export async function startExecutorInstance(
  options: ExecutorInstanceOptions,
): Promise<RunningExecutorInstance> {
  const { app, config, env } = options;
  const log: Logger = createLogger({ service: app, level: config.logLevel, stream: options.logStream });
  // First: from here on nothing in this process can read the control plane's secrets.
  forgetControlPlaneEnv(env, log);

  const shape = appShape(options);
  const types = await resolveExecutorTypes(app, config.instance.executors, {
    env,
    pingDocker: (timeoutMs) => pingDocker(env, timeoutMs),
    ...options.detection,
  });
  const docker = types.includes('docker') && app === 'docker-executor' ? createDockerClient(env) : null;
  const dockerOptions: DockerExecutorOptions | undefined =
    docker && app === 'docker-executor'
      ? {
          docker,
          ownerId: config.docker.ownerId,
          runnerImage: config.instance.runnerImage,
          network: config.docker.network,
          heartbeatIntervalMs: config.docker.heartbeatInterval,
          maxDurationMs: config.docker.maxSyncDuration,
          runtimeDefaults: config.instance.runtimeDefaults,
        }
      : undefined;
  const executors: Executor[] = buildExecutors(types, {
    runnerCommand: options.runnerCommand,
    env,
    standbyRunners: config.instance.standbyRunners,
    processSlots: shape.slotGroups.find((group) => group.executorTypes.includes('process'))?.slots ?? null,
    ...(dockerOptions ? { docker: dockerOptions } : {}),
  });
  const protocol = new ExecutorApiClient({ baseUrl: config.executorApiUrl, token: config.executorApiToken });
  const metrics = createMetrics();

  const stoppers = new StopStack(log);
  const stopAll = (): Promise<void> => stoppers.stopAll();

  try {
    const internal = await startInternalServer({
      addr: config.internalHttpServerAddr,
      metrics,
      ready: () => serverAnswers(config.executorApiUrl),
    });
    stoppers.push(() => internal.close());

    const instance = createInstance({
      instanceId: shape.instanceId,
      type: app,
      version: options.version,
      protocol,
      executors,
      pools: config.instance.pools,
      slotGroups: shape.slotGroups,
      pollIntervalMs: config.instance.queuePollInterval,
      registrationIntervalMs: config.instance.registrationInterval,
      runnerApiUrl: shape.runnerApiUrl,
      resourceDefaults: shape.resourceDefaults,
      log,
      metrics: {
        runningChanged: (type: ExecutorType, count: number) =>
          metrics.taskRunsRunning.set({ instance: `${shape.instanceId}/${type}` }, count),
        claimed: (group: string, count: number) => metrics.claimsTotal.inc({ executor_type: group }, count),
      },
    });
    // Closed after the instance stopped (which still completes its task runs): aborts the pending long poll.
    stoppers.push(() => protocol.close());
    const dockerExecutor = executors.find((e): e is DockerExecutor => e instanceof DockerExecutor);
    if (docker && dockerExecutor && app === 'docker-executor') {
      const ctx: ExecutorContext = { protocol, runnerApiUrl: shape.runnerApiUrl, log };
      const cleanup = startDockerCleanup({
        docker,
        executor: dockerExecutor,
        ownerId: config.docker.ownerId,
        protocol,
        ctx,
        instance,
        intervalMs: config.docker.cleanupInterval,
        log,
      });
      stoppers.push(() => cleanup.stop());
      // Adopted work takes its slots before the first claim.
      await cleanup.first;
    }
    await instance.start();
    stoppers.push(() => instance.stop('shutdown'));
    // Pushed last, so stopped first: nothing wakes an instance that is stopping.
    if (options.wakeOnQueuedWork !== false) {
      stoppers.push(wakeOnQueuedWork({ protocol, wake: () => instance.wake(), log }));
    }

    log.info('executor instance started', {
      instanceId: shape.instanceId,
      executors: types,
      pools: config.instance.pools,
      server: config.executorApiUrl,
      internalPort: internal.port,
    });
    let stopping: Promise<void> | null = null;
    return {
      instanceId: shape.instanceId,
      internalPort: internal.port,
      stop: () =>
        (stopping ??= stopAll().then(() => {
          log.info('executor instance stopped', { instanceId: shape.instanceId });
        })),
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
