import { ConfigError, type ExecutorSelection } from '@sluice/config';
import type { ExecutorType } from '@sluice/protocol';
import { answersWithin, DOCKER_PING_TIMEOUT_MS, KUBERNETES_DRY_RUN_TIMEOUT_MS } from './answers-within';

/** The instance apps that reach the server through its internal API. */
export type ExecutorApp = 'docker-executor' | 'k8s-executor';

/** Where an instance runs: embedded in a standalone server, or one of the executor apps. */
export type InstanceLayout = 'standalone' | ExecutorApp;

export { DOCKER_PING_TIMEOUT_MS, KUBERNETES_DRY_RUN_TIMEOUT_MS };

/** What `auto` looks at; injected so the rule can be tested without a Docker daemon or a cluster. */
export interface DetectionProbes {
  env: NodeJS.ProcessEnv;
  /** True when the Docker API answers a ping; it is given up on after DOCKER_PING_TIMEOUT_MS either way. */
  pingDocker(timeoutMs: number): Promise<boolean>;
  /** A Job create dry run in the Job namespace; when absent, being in a pod decides alone. */
  kubernetesDryRun?(timeoutMs: number): Promise<boolean>;
}

const dockerDetected = (probes: DetectionProbes): Promise<boolean> =>
  answersWithin(() => probes.pingDocker(DOCKER_PING_TIMEOUT_MS), DOCKER_PING_TIMEOUT_MS);

/** Inside a pod (KUBERNETES_SERVICE_HOST set) the Job dry run decides; outside nothing is tried. */
async function kubernetesDetected(probes: DetectionProbes): Promise<boolean> {
  if (!probes.env.KUBERNETES_SERVICE_HOST) return false;
  const dryRun = probes.kubernetesDryRun;
  if (!dryRun) return true;
  return answersWithin(() => dryRun(KUBERNETES_DRY_RUN_TIMEOUT_MS), KUBERNETES_DRY_RUN_TIMEOUT_MS);
}

/**
 * The `SLUICE_EXECUTORS=auto` rule (docs/decisions.md §5).
 * Inline is always on. A standalone server adds process, docker when the
 * Docker API answers, and kubernetes inside a pod when the Job dry run
 * succeeds. A docker-executor adds docker when the Docker API answers; a
 * k8s-executor adds kubernetes only inside a pod, where the Job dry run
 * decides. The process executor is never detected on the executor apps: it
 * runs there only when listed.
 */
export async function detectExecutors(
  layout: InstanceLayout,
  probes: DetectionProbes,
): Promise<ExecutorType[]> {
  switch (layout) {
    case 'standalone': {
      const [docker, kubernetes] = await Promise.all([dockerDetected(probes), kubernetesDetected(probes)]);
      return [
        'inline',
        'process',
        ...(docker ? (['docker'] as const) : []),
        ...(kubernetes ? (['kubernetes'] as const) : []),
      ];
    }
    case 'docker-executor':
      return (await dockerDetected(probes)) ? ['inline', 'docker'] : ['inline'];
    case 'k8s-executor':
      return (await kubernetesDetected(probes)) ? ['inline', 'kubernetes'] : ['inline'];
  }
}

/** Executor types each layout can run at all. */
const ALLOWED: Record<InstanceLayout, readonly ExecutorType[]> = {
  standalone: ['inline', 'process', 'docker', 'kubernetes'],
  'docker-executor': ['inline', 'process', 'docker'],
  'k8s-executor': ['inline', 'process', 'kubernetes'],
};

/** The executor an executor app exists for: with `auto` it is on, or the app does not start. */
export const OWN_EXECUTOR: Record<ExecutorApp, ExecutorType> = {
  'docker-executor': 'docker',
  'k8s-executor': 'kubernetes',
};

const WHAT_TO_DO: Record<InstanceLayout, string> = {
  standalone: 'remove it from SLUICE_EXECUTORS or use auto',
  'docker-executor':
    'start the Docker engine (DOCKER_HOST), or set SLUICE_EXECUTORS=process for a process-only instance',
  'k8s-executor':
    'run it in a pod whose service account may create Jobs in K8S_EXECUTOR_NAMESPACE, set SLUICE_EXECUTORS=kubernetes to skip detection (KUBECONFIG names the cluster), or SLUICE_EXECUTORS=process runs a process instance today',
};

function selectionError(layout: InstanceLayout, message: string): ConfigError {
  return new ConfigError(layout === 'standalone' ? 'server' : layout, [
    { variable: 'SLUICE_EXECUTORS', message },
  ]);
}

/**
 * The executor types an instance runs: an explicit list as it is (inline
 * added), with no detection — a listed executor is on whether or not its
 * engine answers now (the engine watch holds its claims meanwhile); `auto`
 * by detection. Anything this layout or this build cannot run fails the
 * start with a ConfigError naming SLUICE_EXECUTORS, rather than an instance
 * that silently claims nothing.
 */
export async function resolveExecutorTypes(
  layout: InstanceLayout,
  selection: ExecutorSelection,
  probes: DetectionProbes,
): Promise<ExecutorType[]> {
  const types =
    selection === 'auto'
      ? await detectExecutors(layout, probes)
      : [...new Set<ExecutorType>(['inline', ...selection])];
  const foreign = types.filter((t) => !ALLOWED[layout].includes(t));
  if (foreign.length > 0) {
    const where = layout === 'standalone' ? 'a standalone server' : `sluice ${layout}`;
    throw selectionError(
      layout,
      `${foreign.join(', ')} cannot run in ${where}; it runs ${ALLOWED[layout].join(', ')}`,
    );
  }
  if (selection === 'auto' && layout !== 'standalone' && !types.includes(OWN_EXECUTOR[layout])) {
    const found =
      layout === 'docker-executor'
        ? `no Docker API answered a ping within ${DOCKER_PING_TIMEOUT_MS / 1000} s`
        : 'this is not a kubernetes pod (KUBERNETES_SERVICE_HOST is unset) or the Job dry run failed';
    throw selectionError(
      layout,
      `is auto, but ${found}, so this instance would run no ${OWN_EXECUTOR[layout]} tasks; ${WHAT_TO_DO[layout]}`,
    );
  }
  return types;
}
