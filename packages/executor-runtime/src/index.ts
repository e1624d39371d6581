export { forgetControlPlaneEnv } from './env-hygiene';
export { dockerEndpoint, pingDocker } from './docker-ping';
export { answersWithin, DOCKER_PING_TIMEOUT_MS, KUBERNETES_DRY_RUN_TIMEOUT_MS } from './answers-within';
export { detectExecutors, resolveExecutorTypes } from './executor-selection';
export type { DetectionProbes, ExecutorApp, InstanceLayout } from './executor-selection';
export { EXECUTOR_FACTORIES } from './executor-factories';
export type {
  BuiltExecutor,
  CleanupWiring,
  ExecutorBuildContext,
  ExecutorEngine,
  ExecutorFactory,
} from './executor-factories';
export { watchEngines } from './engine-watch';
export type { EngineWatch, WatchedEngine } from './engine-watch';
export { dockerExecutorSlotGroups, k8sExecutorSlotGroups, standaloneSlotGroups } from './slot-groups';
export { layoutSettings } from './layout-settings';
export type { LayoutConfig, LayoutSettings, LayoutWithConfig } from './layout-settings';
export { buildInstance } from './build-instance';
export type { BuiltInstance, InstanceDeps } from './build-instance';
export { relayQueuedWork, WAIT_FOR_WORK_MS } from './relay-queued-work';
export type { RelayQueuedWorkOptions } from './relay-queued-work';
export { serverAnswers, startInternalServer, SERVER_CHECK_TIMEOUT_MS } from './internal-server';
export { startExecutorInstance } from './runtime';
export type { ExecutorAppConfig, ExecutorInstanceOptions, RunningExecutorInstance } from './runtime';
export { runExecutorCommand } from './command';
export type { ExecutorCommandIo, ExecutorCommandOptions } from './command';
