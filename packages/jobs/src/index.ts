export {
  runSchedulerCycle,
  startScheduler,
  SCHEDULER_ADVISORY_LOCK_KEY,
  MAX_DUE_TIMES_PER_FLOW,
} from './scheduler';
export type { SchedulerCycleOptions, SchedulerCycleResult, SchedulerOptions } from './scheduler';
export {
  runRetention,
  startRetention,
  EXECUTOR_CLAIM_RETENTION_MS,
  DEFAULT_RETENTION_BATCH_SIZE,
} from './retention';
export type { RetentionOptions, RetentionResult, RetentionScheduleOptions } from './retention';
export { startBackgroundJobs } from './background';
export type { BackgroundJobs, BackgroundJobsOptions } from './background';
export { startJobsService } from './service';
export type { JobsServiceOptions, RunningJobsService } from './service';
export { sampleQueueDepth } from './queue-depth';
export type { JobsLog } from './log';
