import { ConfigError, type ExecutorSelection } from '@sluice/config';
import {
  DockerExecutor,
  InlineExecutor,
  ProcessExecutor,
  type DockerExecutorOptions,
  type Executor,
} from '@sluice/executors';
import type { ExecutorType } from '@sluice/protocol';

/** The instance apps that reach the server through its internal API. */
export type ExecutorApp = 'docker-executor' | 'k8s-executor';

/** Spec "Which executors an instance has": the Docker API must answer a ping within 2 s. */
export const DOCKER_PING_TIMEOUT_MS = 2_000;
/** Spec: the Job create dry run must succeed within 5 s. */
export const KUBERNETES_DRY_RUN_TIMEOUT_MS = 5_000;

/** What `auto` looks at; injected so the rule can be tested without a Docker daemon or a cluster. */
export interface DetectionProbes {
  env: NodeJS.ProcessEnv;
  /** True when the Docker API answers a ping; it is given up on after DOCKER_PING_TIMEOUT_MS either way. */
  pingDocker(timeoutMs: number): Promise<boolean>;
  /** A Job create dry run in the Job namespace; absent until the kubernetes executor exists, when being in a pod decides alone. */
  kubernetesDryRun?(timeoutMs: number): Promise<boolean>;
}

/** Resolves a probe to false when it rejects or does not answer in time. */
async function within(probe: Promise<boolean>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([probe.catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The `SLUICE_EXECUTORS=auto` rule of an executor app (DESIGN.md "Processes"
 * and point 5). Inline is always on. A docker-executor adds docker when the
 * Docker API answers; a k8s-executor adds kubernetes only inside a pod
 * (KUBERNETES_SERVICE_HOST set), where the Job dry run decides. The process
 * executor is never detected on these apps: it runs only when listed.
 */
export async function detectExecutors(app: ExecutorApp, probes: DetectionProbes): Promise<ExecutorType[]> {
  if (app === 'docker-executor') {
    const docker = await within(probes.pingDocker(DOCKER_PING_TIMEOUT_MS), DOCKER_PING_TIMEOUT_MS);
    return docker ? ['inline', 'docker'] : ['inline'];
  }
  if (!probes.env.KUBERNETES_SERVICE_HOST) return ['inline'];
  const dryRun = probes.kubernetesDryRun
    ? await within(probes.kubernetesDryRun(KUBERNETES_DRY_RUN_TIMEOUT_MS), KUBERNETES_DRY_RUN_TIMEOUT_MS)
    : true;
  return dryRun ? ['inline', 'kubernetes'] : ['inline'];
}

/** Executor types each app can run at all (its own kind, process, inline). */
const ALLOWED: Record<ExecutorApp, readonly ExecutorType[]> = {
  'docker-executor': ['inline', 'process', 'docker'],
  'k8s-executor': ['inline', 'process', 'kubernetes'],
};

/** Executor types this build can start; kubernetes arrives with its own issue. */
const BUILT: ReadonlySet<ExecutorType> = new Set<ExecutorType>(['inline', 'process', 'docker']);

const KIND: Record<ExecutorApp, { type: ExecutorType; name: string }> = {
  'docker-executor': { type: 'docker', name: 'docker' },
  'k8s-executor': { type: 'kubernetes', name: 'kubernetes' },
};

function selectionError(app: ExecutorApp, message: string): ConfigError {
  return new ConfigError(app, [{ variable: 'SLUICE_EXECUTORS', message }]);
}

/**
 * The executor types an instance of `app` runs: an explicit list as it is
 * (the config already added inline), `auto` by detection. Anything this app
 * or this build cannot run fails the start with a ConfigError naming
 * SLUICE_EXECUTORS, rather than an instance that silently claims nothing.
 */
export async function resolveExecutorTypes(
  app: ExecutorApp,
  selection: ExecutorSelection,
  probes: DetectionProbes,
): Promise<ExecutorType[]> {
  const { type: own, name } = KIND[app];
  const today =
    app === 'docker-executor'
      ? 'start the Docker engine (DOCKER_HOST), or set SLUICE_EXECUTORS=process for a process-only instance'
      : 'SLUICE_EXECUTORS=process runs a process instance today';
  const types = selection === 'auto' ? await detectExecutors(app, probes) : [...selection];
  const foreign = types.filter((t) => !ALLOWED[app].includes(t));
  if (foreign.length > 0) {
    throw selectionError(
      app,
      `${foreign.join(', ')} cannot run in sluice ${app}; it runs ${ALLOWED[app].join(', ')}`,
    );
  }
  if (types.includes(own) && !BUILT.has(own)) {
    throw selectionError(
      app,
      `${selection === 'auto' ? `auto detected the ${name} executor, which` : `lists ${own}, but the ${name} executor`} ` +
        `is not part of this build yet: it arrives with its own issue. ${today}`,
    );
  }
  if (selection !== 'auto' && app === 'docker-executor' && types.includes('docker')) {
    // Listed: an engine that does not answer would fail every docker task run it claims.
    const answers = await within(probes.pingDocker(DOCKER_PING_TIMEOUT_MS), DOCKER_PING_TIMEOUT_MS);
    if (!answers) {
      throw selectionError(
        app,
        `lists docker, but no Docker API answered a ping within ${DOCKER_PING_TIMEOUT_MS / 1000} s (DOCKER_HOST=${probes.env.DOCKER_HOST ?? 'unset, so /var/run/docker.sock'})`,
      );
    }
  }
  if (selection === 'auto' && !types.includes(own)) {
    const found =
      app === 'docker-executor'
        ? `no Docker API answered a ping within ${DOCKER_PING_TIMEOUT_MS / 1000} s`
        : 'this is not a kubernetes pod (KUBERNETES_SERVICE_HOST is unset) or the Job dry run failed';
    throw selectionError(app, `is auto, but ${found}, so this instance would run no ${name} tasks; ${today}`);
  }
  return types;
}

/** One executor per type, in the order given. */
export function buildExecutors(
  types: readonly ExecutorType[],
  options: {
    runnerCommand: string[];
    env: NodeJS.ProcessEnv;
    docker?: DockerExecutorOptions;
    /** SLUICE_STANDBY_RUNNERS; the process executor's default when absent. */
    standbyRunners?: number;
    /** The slots of the process executor's slot group, which bound its standbys too. */
    processSlots?: number | null;
  },
): Executor[] {
  return types.map((type): Executor => {
    switch (type) {
      case 'inline':
        return new InlineExecutor();
      case 'process':
        return new ProcessExecutor({
          runnerCommand: options.runnerCommand,
          env: options.env,
          standbyRunners: options.standbyRunners,
          slots: options.processSlots,
        });
      case 'docker':
        if (!options.docker) throw new Error('buildExecutors: the docker executor needs its options');
        return new DockerExecutor(options.docker);
      default:
        // resolveExecutorTypes refuses these first; this guards a direct caller.
        throw new Error(`the ${type} executor is not part of this build yet`);
    }
  });
}
