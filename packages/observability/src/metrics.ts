import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The metrics Sluice processes export on /metrics, with the process defaults. */
export interface Metrics {
  registry: Registry;
  /** Task runs claimed, by executor type. */
  claimsTotal: Counter<'executor_type'>;
  /** Time one claim query takes. */
  claimDuration: Histogram<'executor_type'>;
  /** Queued task runs, by pool and executor type. */
  queueDepth: Gauge<'pool' | 'executor_type'>;
  /** Task runs an instance is running now. */
  taskRunsRunning: Gauge<'instance'>;
  /** Heartbeats received (server) or sent (executors). */
  heartbeatsTotal: Counter;
  /** Task runs the watchdog failed, by reason (e.g. `lost`). */
  watchdogFailuresTotal: Counter<'reason'>;
  /** HTTP requests by method, route pattern and status. */
  httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  /** Task runs that reached a terminal state, by state and reason. */
  taskRunsFinishedTotal: Counter<'state' | 'reason'>;
}

export interface MetricsOptions {
  /** Added as a `service` label to every metric. */
  service?: string;
}

/** A fresh registry (never the global one, so tests and several apps in one process do not collide). */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.service) registry.setDefaultLabels({ service: options.service });
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    claimsTotal: new Counter({
      name: 'sluice_claims_total',
      help: 'Task runs claimed, by executor type.',
      labelNames: ['executor_type'],
      registers,
    }),
    claimDuration: new Histogram({
      name: 'sluice_claim_duration_seconds',
      help: 'Duration of one claim.',
      labelNames: ['executor_type'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    }),
    queueDepth: new Gauge({
      name: 'sluice_queue_depth',
      help: 'Queued task runs, by pool and executor type.',
      labelNames: ['pool', 'executor_type'],
      registers,
    }),
    taskRunsRunning: new Gauge({
      name: 'sluice_task_runs_running',
      help: 'Task runs running on an instance.',
      labelNames: ['instance'],
      registers,
    }),
    heartbeatsTotal: new Counter({
      name: 'sluice_heartbeats_total',
      help: 'Task run heartbeats.',
      registers,
    }),
    watchdogFailuresTotal: new Counter({
      name: 'sluice_watchdog_failures_total',
      help: 'Task runs failed by the watchdog, by reason.',
      labelNames: ['reason'],
      registers,
    }),
    httpRequestDuration: new Histogram({
      name: 'sluice_http_request_duration_seconds',
      help: 'HTTP request duration, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    taskRunsFinishedTotal: new Counter({
      name: 'sluice_task_runs_finished_total',
      help: 'Task runs that ended, by state and reason.',
      labelNames: ['state', 'reason'],
      registers,
    }),
  };
}
