export { forgetControlPlaneEnv } from './env-hygiene';
export { dockerEndpoint, pingDocker } from './docker-ping';
export {
  buildExecutors,
  detectExecutors,
  resolveExecutorTypes,
  DOCKER_PING_TIMEOUT_MS,
  KUBERNETES_DRY_RUN_TIMEOUT_MS,
} from './executor-selection';
export type { DetectionProbes, ExecutorApp } from './executor-selection';
export { dockerExecutorSlotGroups, k8sExecutorSlotGroups } from './slot-groups';
export { wakeOnQueuedWork, WAIT_FOR_WORK_MS } from './work-signal';
export type { WakeLoopOptions } from './work-signal';
export { serverAnswers, startInternalServer, SERVER_CHECK_TIMEOUT_MS } from './internal-server';
export { startExecutorInstance } from './runtime';
export type { ExecutorAppConfig, ExecutorInstanceOptions, RunningExecutorInstance } from './runtime';
export { runExecutorCommand } from './command';
export type { ExecutorCommandIo, ExecutorCommandOptions } from './command';
