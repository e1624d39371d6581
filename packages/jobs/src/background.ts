import type { SchedulingSettings } from '@sluice/config';
import { EVENTS_CHANNEL, type Engine } from '@sluice/engine';
import { StopStack, type Metrics } from '@sluice/observability';
import { startNotifyRelay, type Store } from '@sluice/store';
import type { JobsLog } from './log';
import { startPeriodic } from './periodic';
import { sampleQueueDepth } from './queue-depth';
import { startRetention } from './retention';
import { startScheduler } from './scheduler';

export interface BackgroundJobsOptions {
  /** Its databaseUrl is where the dedicated LISTEN connection connects (a pool's connections cannot hold one). */
  store: Store;
  /** Built without a keyring and with jwtSecret '' in `sluice jobs`; the server passes its own. */
  engine: Engine;
  scheduling: SchedulingSettings;
  log: JobsLog;
  /** When given: watchdog failures are counted and the queue depth is sampled. */
  metrics?: Pick<Metrics, 'watchdogFailuresTotal' | 'queueDepth'>;
  /** Event consumer poll when no NOTIFY arrives. Default 1 s. */
  eventPollIntervalMs?: number;
  /** Between retention passes. Default 10 min. */
  retentionIntervalMs?: number;
  /** Before the first retention pass. Default 30 s. */
  retentionFirstDelayMs?: number;
  /** Between queue-depth samples (only with metrics). Default 15 s. */
  queueDepthIntervalMs?: number;
  /** Wait before re-opening a lost LISTEN connection. Default 3 s. */
  listenRetryMs?: number;
}

export interface BackgroundJobs {
  /** Stops everything, waiting for passes in flight; never rejects. */
  stop(): Promise<void>;
}

/**
 * The background work of `sluice jobs` (and of a standalone server): the
 * scheduler, the watchdog, retention, the event consumer, and the NOTIFY
 * relay that wakes the consumer when any process writes an event. Each part
 * is safe to run in several replicas at once. No process concerns here — the
 * caller owns signals and exit codes.
 */
export async function startBackgroundJobs(options: BackgroundJobsOptions): Promise<BackgroundJobs> {
  const { store, engine, scheduling, log, metrics } = options;
  // Stopped in reverse order: first what creates work, last what wakes the consumer.
  const stoppers = new StopStack(log);
  const stop = (): Promise<void> => stoppers.stopAll();

  try {
    const relay = startNotifyRelay({
      databaseUrl: store.databaseUrl,
      channels: { [EVENTS_CHANNEL]: () => engine.eventSignal.notify() },
      log,
      retryDelayMs: options.listenRetryMs,
    });
    stoppers.push(() => relay.stop());
    await relay.firstAttempt;

    stoppers.push(engine.startEventConsumer({ pollIntervalMs: options.eventPollIntervalMs ?? 1000 }));
    // The watchdog: stop() waits for a sweep in flight, like every other periodic job.
    stoppers.push(
      startPeriodic({
        name: 'watchdog',
        intervalMs: scheduling.watchdogInterval,
        log,
        run: async () => {
          const failed = await engine.sweepLostTaskRuns(scheduling.heartbeatTimeout);
          if (failed > 0) metrics?.watchdogFailuresTotal.inc({ reason: 'lost' }, failed);
        },
      }),
    );
    if (metrics) {
      const gauge = metrics.queueDepth;
      stoppers.push(
        startPeriodic({
          name: 'queue depth',
          intervalMs: options.queueDepthIntervalMs ?? 15_000,
          firstDelayMs: 0,
          log,
          run: () => sampleQueueDepth(store, gauge),
        }),
      );
    }
    stoppers.push(
      startRetention({
        store,
        retentionMs: scheduling.retention,
        intervalMs: options.retentionIntervalMs ?? 10 * 60_000,
        firstDelayMs: options.retentionFirstDelayMs,
        log,
      }),
    );
    stoppers.push(
      startScheduler({
        store,
        engine,
        maxConcurrentJobs: scheduling.maxConcurrentJobs,
        intervalMs: scheduling.schedulerInterval,
        log,
      }),
    );
    log.info('background jobs started', {
      schedulerIntervalMs: scheduling.schedulerInterval,
      maxConcurrentJobs: scheduling.maxConcurrentJobs,
      watchdogIntervalMs: scheduling.watchdogInterval,
      heartbeatTimeoutMs: scheduling.heartbeatTimeout,
      retentionMs: scheduling.retention,
      listening: relay.listening(),
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}
