import type {
  DockerExecutorConfig,
  DockerSettings,
  InstanceSettings as InstanceVariables,
  K8sExecutorConfig,
  K8sSettings,
  ServerConfig,
} from '@sluice/config';
import type { SlotGroupConfig } from '@sluice/instance';
import type { InstanceLayout } from './executor-selection';
import { dockerExecutorSlotGroups, k8sExecutorSlotGroups, standaloneSlotGroups } from './slot-groups';

/** Each layout's parsed configuration (parseEnv of `server`, `docker-executor`, `k8s-executor`). */
export interface LayoutConfig {
  standalone: ServerConfig;
  'docker-executor': DockerExecutorConfig;
  'k8s-executor': K8sExecutorConfig;
}

/** A layout with its configuration, as one value TypeScript can tell apart. */
export type LayoutWithConfig = {
  [L in InstanceLayout]: { layout: L; config: LayoutConfig[L] };
}[InstanceLayout];

/** What the instance builder needs of a layout's configuration, the same shape for every layout. */
export interface LayoutSettings {
  layout: InstanceLayout;
  /** Named in configuration errors. */
  app: 'server' | 'docker-executor' | 'k8s-executor';
  instance: InstanceVariables;
  slotGroups: SlotGroupConfig[];
  /** What runners started by this instance call (SLUICE_API_URL). */
  runnerApiUrl: string;
  resourceDefaults: Record<string, string>;
  /** The instance's ID when none of its executors has an owner ID (SLUICE_INSTANCE_ID, the hostname; a k8s-executor's owner ID). */
  instanceId: string;
  /** DOCKER_EXECUTOR_* where the docker executor can run. */
  docker?: DockerSettings;
  /** K8S_EXECUTOR_* where the kubernetes executor can run. */
  k8s?: K8sSettings;
}

export function layoutSettings(spec: LayoutWithConfig): LayoutSettings {
  switch (spec.layout) {
    case 'standalone': {
      const { config } = spec;
      return {
        layout: 'standalone',
        app: 'server',
        instance: config.instance,
        slotGroups: standaloneSlotGroups(config.instance.workerSlots, config.k8s.jobWorkerInterval),
        runnerApiUrl: config.apiUrl,
        resourceDefaults: {},
        instanceId: config.instanceId,
        docker: config.docker,
        k8s: config.k8s,
      };
    }
    case 'docker-executor': {
      const { config } = spec;
      return {
        layout: 'docker-executor',
        app: 'docker-executor',
        instance: config.instance,
        slotGroups: dockerExecutorSlotGroups(config),
        runnerApiUrl: config.apiUrl,
        resourceDefaults: { ...config.instance.runtimeDefaults },
        instanceId: config.instanceId,
        docker: config.docker,
      };
    }
    case 'k8s-executor': {
      const { config } = spec;
      const defaults = config.instance.runtimeDefaults;
      return {
        layout: 'k8s-executor',
        app: 'k8s-executor',
        instance: config.instance,
        slotGroups: k8sExecutorSlotGroups(config),
        // Task pods and local runners alike reach the server at K8S_EXECUTOR_SERVER_ADDR (default EXECUTOR_API_URL).
        runnerApiUrl: config.k8s.serverAddr,
        resourceDefaults: {
          cpu: defaults.cpu ?? config.k8s.defaultCpu,
          memory: defaults.memory ?? config.k8s.defaultMemory,
        },
        // An instance without the kubernetes executor (SLUICE_EXECUTORS=process) is named by the owner ID too.
        instanceId: config.k8s.ownerId,
        k8s: config.k8s,
      };
    }
  }
}
