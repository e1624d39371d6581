export { createLogger } from './logger';
export type { Logger, LoggerOptions, LogLevel } from './logger';
export {
  registerSecretValue,
  forgetSecretValue,
  redactString,
  redactValue,
  redactRecord,
  REDACTED,
  SENSITIVE_KEY,
  MIN_SECRET_LENGTH,
} from './redact';
export { createMetrics } from './metrics';
export type { Metrics, MetricsOptions } from './metrics';
export { probeRoutes, httpMetricsMiddleware } from './probes';
export type { ProbeOptions, ReadyCheck, ReadyResult } from './probes';
export { startHttpServer } from './http-server';
export type { RunningHttpServer } from './http-server';
export { StopStack } from './stop-stack';
export type { Stopper } from './stop-stack';
export { startPeriodic } from './periodic';
export type { PeriodicOptions } from './periodic';
export { runUntilSignal, EXIT_STOPPED, EXIT_STOP_FAILED, EXIT_SECOND_SIGNAL } from './run-until-signal';
export type { RunUntilSignalOptions, ShutdownSignal, SignalSource, Stoppable } from './run-until-signal';
