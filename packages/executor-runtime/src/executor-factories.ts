import type { DockerSettings, InstanceSettings as InstanceVariables, K8sSettings } from '@sluice/config';
import { ConfigError } from '@sluice/config';
import {
  createDockerClient,
  createKubeClient,
  DockerExecutor,
  InlineExecutor,
  KubernetesExecutor,
  kubernetesDryRun,
  ProcessExecutor,
  type Executor,
  type ExecutorContext,
  type Logger,
} from '@sluice/executors';
import {
  startDockerCleanup,
  startKubernetesCleanup,
  type AdoptionTarget,
  type CleanupLoop,
} from '@sluice/owner-cleanup';
import type { ExecutorProtocol, ExecutorType } from '@sluice/protocol';
import { answersWithin, DOCKER_PING_TIMEOUT_MS, KUBERNETES_DRY_RUN_TIMEOUT_MS } from './answers-within';

/** What a factory builds an executor from. */
export interface ExecutorBuildContext {
  /** The app named in configuration errors (`server` for a standalone server). */
  app: string;
  instance: InstanceVariables;
  /** DOCKER_EXECUTOR_* (standalone server and docker-executor). */
  docker?: DockerSettings;
  /** K8S_EXECUTOR_* (standalone server and k8s-executor). */
  k8s?: K8sSettings;
  /** The slots of this executor's slot group (the process executor bounds its standbys by them). */
  slots: number | null;
  runnerCommand: string[];
  /** DOCKER_HOST, and the environment the process executor's runners inherit from. */
  env: NodeJS.ProcessEnv;
  /** The one Docker ping (detection uses it too); tests pass their own. */
  pingDocker(timeoutMs: number): Promise<boolean>;
}

/** An engine an executor needs (Docker API, kubernetes API): the instance claims nothing for it while it does not answer. */
export interface ExecutorEngine {
  /** As the log and /ready name it, e.g. "Docker API". */
  name: string;
  /** True when it answers now; resolves false (never rejects) within its probe's timeout. */
  answers(): Promise<boolean>;
}

/** What the owner-ID cleanup and adoption works with. */
export interface CleanupWiring {
  protocol: ExecutorProtocol;
  ctx: ExecutorContext;
  instance: AdoptionTarget;
  log: Logger;
}

export interface BuiltExecutor {
  executor: Executor;
  /** The owner ID it labels its work with; the instance registers under it (the executor list's ID). */
  ownerId?: string;
  engine?: ExecutorEngine;
  /** Removes this owner's leftovers and adopts its still-running work, at start and every interval. */
  startCleanup?(wiring: CleanupWiring): CleanupLoop;
}

/** How one executor type is built. Adding an executor (kubernetes) is adding its factory here. */
export interface ExecutorFactory {
  /** Refuses a configuration it cannot run with (a ConfigError naming the variable), before any detection. */
  check?(ctx: ExecutorBuildContext): void;
  create(ctx: ExecutorBuildContext): BuiltExecutor;
}

const inline: ExecutorFactory = { create: () => ({ executor: new InlineExecutor() }) };

const processFactory: ExecutorFactory = {
  create: (ctx) => ({
    executor: new ProcessExecutor({
      runnerCommand: ctx.runnerCommand,
      env: ctx.env,
      standbyRunners: ctx.instance.standbyRunners,
      slots: ctx.slots,
      taskUser: ctx.instance.processTaskUser,
    }),
  }),
};

/**
 * An executor's settings with the owner ID it cannot run without (it labels
 * its resources, registers under it and scopes its cleanup by it); refused,
 * naming `variable`, when the ID is missing.
 */
function withOwnerId<T extends { ownerId?: string | null }>(
  ctx: ExecutorBuildContext,
  settings: T | undefined,
  variable: string,
  why: string,
): T & { ownerId: string } {
  const ownerId = settings?.ownerId;
  if (!settings || !ownerId) throw ConfigError.missing(ctx.app, variable, why);
  return { ...settings, ownerId };
}

/** DOCKER_EXECUTOR_OWNER_ID and the rest of DOCKER_EXECUTOR_*. */
const dockerSettings = (ctx: ExecutorBuildContext) =>
  withOwnerId(
    ctx,
    ctx.docker,
    'DOCKER_EXECUTOR_OWNER_ID',
    'this instance runs the docker executor (SLUICE_EXECUTORS), which labels its containers with it, registers under it and limits its cleanup to them',
  );

const docker: ExecutorFactory = {
  check(ctx) {
    dockerSettings(ctx);
  },
  create(ctx) {
    const settings = dockerSettings(ctx);
    const { ownerId } = settings;
    const client = createDockerClient(ctx.env);
    const executor = new DockerExecutor({
      docker: client,
      ownerId,
      runnerImage: ctx.instance.runnerImage,
      network: settings.network,
      heartbeatIntervalMs: settings.heartbeatInterval,
      maxDurationMs: settings.maxSyncDuration,
      runtimeDefaults: ctx.instance.runtimeDefaults,
    });
    return {
      executor,
      ownerId,
      engine: {
        name: 'Docker API',
        answers: () => answersWithin(() => ctx.pingDocker(DOCKER_PING_TIMEOUT_MS), DOCKER_PING_TIMEOUT_MS),
      },
      startCleanup: (wiring) =>
        startDockerCleanup({
          docker: client,
          executor,
          ownerId,
          protocol: wiring.protocol,
          ctx: wiring.ctx,
          instance: wiring.instance,
          intervalMs: settings.cleanupInterval,
          log: wiring.log,
        }),
    };
  },
};

/** K8S_EXECUTOR_OWNER_ID (or its prefix rule) and the rest of K8S_EXECUTOR_*. */
const k8sSettings = (ctx: ExecutorBuildContext) =>
  withOwnerId(
    ctx,
    ctx.k8s,
    'K8S_EXECUTOR_OWNER_ID',
    'this instance runs the kubernetes executor (SLUICE_EXECUTORS), which labels its Jobs and Secrets with it, registers under it and limits its cleanup to them',
  );

/** True when a Job create dry run in the namespace succeeds within 5 s (detection and the engine watch). */
export function kubernetesAnswers(namespace: string, env: NodeJS.ProcessEnv): () => Promise<boolean> {
  let client: ReturnType<typeof createKubeClient> | null = null;
  return () =>
    answersWithin(
      () => kubernetesDryRun((client ??= createKubeClient(namespace, env))),
      KUBERNETES_DRY_RUN_TIMEOUT_MS,
    );
}

const kubernetes: ExecutorFactory = {
  check(ctx) {
    k8sSettings(ctx);
  },
  create(ctx) {
    const settings = k8sSettings(ctx);
    const { ownerId } = settings;
    const defaults = ctx.instance.runtimeDefaults;
    const client = createKubeClient(settings.namespace, ctx.env);
    const executor = new KubernetesExecutor({
      client,
      ownerId,
      runnerImage: ctx.instance.runnerImage,
      serverAddr: settings.serverAddr,
      podPendingTimeoutMs: settings.podPendingTimeout,
      defaultResources: {
        cpu: defaults.cpu ?? settings.defaultCpu,
        memory: defaults.memory ?? settings.defaultMemory,
      },
    });
    return {
      executor,
      ownerId,
      engine: { name: 'Kubernetes API', answers: kubernetesAnswers(settings.namespace, ctx.env) },
      startCleanup: (wiring) =>
        startKubernetesCleanup({
          client,
          executor,
          ownerId,
          protocol: wiring.protocol,
          ctx: wiring.ctx,
          instance: wiring.instance,
          intervalMs: settings.cleanupInterval,
          log: wiring.log,
        }),
    };
  },
};

/** The executors this build can start, by type: adding an executor is adding its factory here. */
export const EXECUTOR_FACTORIES: Partial<Record<ExecutorType, ExecutorFactory>> = {
  inline,
  process: processFactory,
  docker,
  kubernetes,
};
