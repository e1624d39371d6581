// The periodic helper lives in @sluice/observability: the engine's watchdog runs on it too.
export { startPeriodic } from '@sluice/observability';
export type { PeriodicOptions } from '@sluice/observability';
