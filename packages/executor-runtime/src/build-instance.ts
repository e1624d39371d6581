import type { DockerExecutorConfig, K8sExecutorConfig, ServerConfig } from '@sluice/config';
import type { ExecutorContext, Logger } from '@sluice/executors';
import { createInstance, type Instance } from '@sluice/instance';
import { StopStack, type Metrics } from '@sluice/observability';
import type { ExecutorProtocol, ExecutorType } from '@sluice/protocol';
import { pingDocker } from './docker-ping';
import { watchEngines, type WatchedEngine } from './engine-watch';
import {
  EXECUTOR_FACTORIES,
  kubernetesAnswers,
  type BuiltExecutor,
  type ExecutorBuildContext,
} from './executor-factories';
import {
  OWN_EXECUTOR,
  resolveExecutorTypes,
  type DetectionProbes,
  type InstanceLayout,
} from './executor-selection';
import { layoutSettings, type LayoutWithConfig } from './layout-settings';
import { relayQueuedWork } from './relay-queued-work';

/** What the builder is handed rather than builds: it never opens the database nor imports the engine. */
export interface InstanceDeps {
  /** The engine's direct binding in a standalone server; the executor API's HTTP client in an executor app. */
  protocol: ExecutorProtocol;
  /** Reported at registration. */
  version: string;
  /** How the process executor starts `sluice exec` (argv). */
  runnerCommand: string[];
  /** DOCKER_HOST, KUBERNETES_SERVICE_HOST, and what the process executor's runners inherit. */
  env: NodeJS.ProcessEnv;
  log: Logger;
  metrics?: Pick<Metrics, 'taskRunsRunning' | 'claimsTotal'>;
  /** Overrides the configured SLUICE_API_URL (a standalone server's follows the port it bound). */
  runnerApiUrl?: string;
  /** `auto` detection and the engine watch; the default pings the Docker API named by DOCKER_HOST. */
  probes?: Partial<Omit<DetectionProbes, 'env'>>;
  /** Wake on the protocol's queued-work signal (default true); false leaves only the poll timer (benchmarks compare both). */
  relayQueuedWork?: boolean;
  /** Between checks of the executors' engines. Default 5 s. */
  engineCheckIntervalMs?: number;
}

export interface BuiltInstance {
  /** The owner ID of the executor that has one (the docker one), else SLUICE_INSTANCE_ID: its ID in the executor list. */
  instanceId: string;
  executorTypes: ExecutorType[];
  instance: Instance;
  /** Not ready while an executor's engine does not answer. */
  ready(): { ok: boolean; detail?: string };
  /** Cleans up and adopts this owner's leftovers, checks the engines, then registers and claims; wakes on queued work. */
  start(): Promise<void>;
  /** The reverse: no more wake-ups and engine checks, the instance stops (local work ends), then the cleanup loop. */
  stop(): Promise<void>;
}

const ENGINE_CHECK_INTERVAL_MS = 5_000;

/**
 * The one way an instance is built, for every layout: a standalone server's
 * embedded instance and the docker-executor and k8s-executor apps. It picks
 * the executors (SLUICE_EXECUTORS: a list as it is, `auto` by detection),
 * builds each through its factory, the layout's slot groups, the owner-ID
 * cleanup and adoption, and the watch of each executor's engine.
 */
export function buildInstance(
  layout: 'standalone',
  config: ServerConfig,
  deps: InstanceDeps,
): Promise<BuiltInstance>;
export function buildInstance(
  layout: 'docker-executor',
  config: DockerExecutorConfig,
  deps: InstanceDeps,
): Promise<BuiltInstance>;
export function buildInstance(
  layout: 'k8s-executor',
  config: K8sExecutorConfig,
  deps: InstanceDeps,
): Promise<BuiltInstance>;
export async function buildInstance(
  layout: InstanceLayout,
  config: ServerConfig | DockerExecutorConfig | K8sExecutorConfig,
  deps: InstanceDeps,
): Promise<BuiltInstance> {
  // The overloads pair each layout with its own configuration.
  const settings = layoutSettings({ layout, config } as LayoutWithConfig);
  const { env, log, protocol } = deps;
  const ping = deps.probes?.pingDocker ?? ((timeoutMs: number) => pingDocker(env, timeoutMs));
  const context = (type: ExecutorType): ExecutorBuildContext => ({
    app: settings.app,
    instance: settings.instance,
    ...(settings.docker ? { docker: settings.docker } : {}),
    ...(settings.k8s ? { k8s: settings.k8s } : {}),
    slots: settings.slotGroups.find((group) => group.executorTypes.includes(type))?.slots ?? null,
    runnerCommand: deps.runnerCommand,
    env,
    pingDocker: ping,
  });
  // What is sure to run is checked before anyone is asked: a listed executor, or an executor app's own with auto.
  const selection = settings.instance.executors;
  const sure = selection !== 'auto' ? selection : layout === 'standalone' ? [] : [OWN_EXECUTOR[layout]];
  for (const type of sure) EXECUTOR_FACTORIES[type]?.check?.(context(type));
  const dryRun =
    deps.probes?.kubernetesDryRun ??
    (settings.k8s ? kubernetesAnswers(settings.k8s.namespace, env) : undefined);
  const types = await resolveExecutorTypes(layout, selection, {
    env,
    pingDocker: ping,
    ...(dryRun ? { kubernetesDryRun: dryRun } : {}),
  });

  const built = new Map<ExecutorType, BuiltExecutor>();
  for (const type of types) {
    const factory = EXECUTOR_FACTORIES[type];
    // resolveExecutorTypes refused unbuilt types already.
    if (!factory) throw new Error(`the ${type} executor is not part of this build yet`);
    built.set(type, factory.create(context(type)));
  }
  const parts = [...built.values()];
  // The owner ID is also the instance's ID in the executor list (one owner per instance today).
  const instanceId = parts.find((part) => part.ownerId)?.ownerId ?? settings.instanceId;
  const runnerApiUrl = deps.runnerApiUrl ?? settings.runnerApiUrl;
  const engines: WatchedEngine[] = [];
  for (const [type, part] of built) if (part.engine) engines.push({ type, engine: part.engine });

  let instance: Instance | null = null;
  const watch = watchEngines({
    engines,
    intervalMs: deps.engineCheckIntervalMs ?? ENGINE_CHECK_INTERVAL_MS,
    log,
    onBack: () => instance?.wake(),
  });
  const { metrics } = deps;
  const local = createInstance({
    instanceId,
    type: layout,
    version: deps.version,
    protocol,
    executors: parts.map((part) => part.executor),
    pools: settings.instance.pools,
    slotGroups: settings.slotGroups,
    pollIntervalMs: settings.instance.queuePollInterval,
    registrationIntervalMs: settings.instance.registrationInterval,
    runnerApiUrl,
    resourceDefaults: settings.resourceDefaults,
    claimable: (type) => watch.claimable(type),
    log,
    ...(metrics
      ? {
          metrics: {
            runningChanged: (type: ExecutorType, count: number) =>
              metrics.taskRunsRunning.set({ instance: `${instanceId}/${type}` }, count),
            claimed: (group: string, count: number) =>
              metrics.claimsTotal.inc({ executor_type: group }, count),
          },
        }
      : {}),
  });
  instance = local;

  const stoppers = new StopStack(log);
  let stopping: Promise<void> | null = null;
  const ctx: ExecutorContext = { protocol, runnerApiUrl, log };
  return {
    instanceId,
    executorTypes: types,
    instance: local,
    ready: () => watch.ready(),
    async start() {
      for (const part of parts) {
        if (!part.startCleanup) continue;
        const cleanup = part.startCleanup({ protocol, ctx, instance: local, log });
        stoppers.push(() => cleanup.stop());
        // Adopted work takes its slots before the first claim.
        await cleanup.first;
      }
      await watch.check();
      await local.start();
      stoppers.push(() => local.stop('shutdown'));
      watch.start();
      stoppers.push(() => watch.stop());
      // Pushed last, so stopped first: nothing wakes an instance that is stopping.
      if (deps.relayQueuedWork !== false)
        stoppers.push(relayQueuedWork({ protocol, wake: () => local.wake(), log }));
    },
    stop: () => (stopping ??= stoppers.stopAll()),
  };
}
