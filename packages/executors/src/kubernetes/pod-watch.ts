import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient, PodWatchEvent } from './kube-client';

export interface PodWatchOptions {
  client: Pick<KubeClient, 'podsVersion' | 'watchPods'>;
  /** `sluice.io/owner=<owner ID>`: only this executor's pods. */
  labelSelector: string;
  /**
   * A pod of the selector changed; `null` after a restart from a fresh list (410 Gone, a
   * dropped connection): anything may have changed meanwhile.
   */
  onChange(pod: V1Pod | null): void;
  /** Why the watch restarts (logged by the executor); never fatal. */
  onTrouble?(message: string, fields: Record<string, unknown>): void;
  /** First wait before a restart after a failure, doubled up to `maxBackoffMs`; default 500 ms. */
  backoffMs?: number;
  /** Default 30 s. */
  maxBackoffMs?: number;
  /** The server ends each watch after this long (a fresh connection now and then); default 300 s. */
  timeoutSeconds?: number;
  /** Where the first watch starts instead of a fresh list (tests and benchmarks). */
  resourceVersion?: string;
}

/** What the watch did so far (tests and benchmarks read it). */
export interface PodWatchStats {
  /** Lists taken for a fresh resourceVersion (the first one and one after each 410). */
  lists: number;
  /** Watch connections opened. */
  watches: number;
  /** 410 Gone answers seen. */
  gone: number;
  /** Pod events handed on. */
  events: number;
}

/** A connection that ended this fast without an event counts as a failure (no tight reconnect loop). */
const SHORTEST_HEALTHY_MS = 1_000;

/**
 * A watch of the executor's pods, only a fast hint (docs/kubernetes-executor.md): each event
 * makes the executor look at that pod's Job now instead of at its next poll; the poll and the
 * cleanup's full list stay the source of truth, so a missed event costs only time. It restarts
 * by itself: from the last resourceVersion when the server ends a watch, from a fresh list on
 * `410 Gone`, with a doubling backoff on errors and drops. `stop` aborts it for good.
 */
export class PodWatch {
  readonly stats: PodWatchStats = { lists: 0, watches: 0, gone: 0, events: 0 };
  private readonly options: PodWatchOptions;
  private version: string | null;
  private failures = 0;
  private stopped = false;
  private controller: AbortController | null = null;
  private timer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;

  constructor(options: PodWatchOptions) {
    this.options = options;
    this.version = options.resourceVersion ?? null;
  }

  start(): void {
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.clearWatchdog();
    this.controller?.abort();
    this.controller = null;
  }

  private async connect(): Promise<void> {
    this.timer = null;
    if (this.stopped) return;
    const timeoutSeconds = this.options.timeoutSeconds ?? 300;
    const connection = { gone: false, events: 0, openedAt: Date.now(), error: '' };
    try {
      if (this.version === null) {
        this.version = await this.options.client.podsVersion(this.options.labelSelector);
        this.stats.lists += 1;
        // Events between the old version and this list are lost: look at everything once.
        if (this.stats.lists > 1 && !this.stopped) this.options.onChange(null);
      }
      if (this.stopped) return;
      this.stats.watches += 1;
      const controller = await this.options.client.watchPods(
        this.options.labelSelector,
        this.version,
        timeoutSeconds,
        (event) => this.onEvent(event, connection, timeoutSeconds),
        (err) => this.ended(err, connection),
      );
      if (this.stopped) controller.abort();
      else if (this.timer === null) {
        this.controller = controller;
        this.armWatchdog(timeoutSeconds);
      }
    } catch (err) {
      this.ended(err, connection);
    }
  }

  private onEvent(
    event: PodWatchEvent,
    connection: { gone: boolean; events: number; error: string },
    timeoutSeconds: number,
  ): void {
    if (this.stopped) return;
    if (event.type === 'ERROR') {
      if (event.object.code === 410) connection.gone = true;
      else connection.error = event.object.message ?? `code ${event.object.code ?? '?'}`;
      return;
    }
    connection.events += 1;
    this.armWatchdog(timeoutSeconds);
    const version = event.object.metadata?.resourceVersion;
    if (version) this.version = version;
    if (event.type === 'BOOKMARK') return;
    this.stats.events += 1;
    this.options.onChange(event.object);
  }

  private ended(
    err: unknown,
    connection: { gone: boolean; events: number; openedAt: number; error: string },
  ): void {
    this.clearWatchdog();
    this.controller = null;
    if (this.stopped || this.timer !== null) return;
    const status =
      typeof err === 'object' && err !== null ? (err as { statusCode?: unknown; code?: unknown }) : {};
    if (connection.gone || status.statusCode === 410 || status.code === 410) {
      this.stats.gone += 1;
      this.version = null;
    }
    const healthy =
      !err &&
      !connection.gone &&
      !connection.error &&
      (connection.events > 0 || Date.now() - connection.openedAt >= SHORTEST_HEALTHY_MS);
    if (healthy) {
      // The server's timeoutSeconds: carry on from the last version at once.
      this.failures = 0;
      this.timer = setTimeout(() => void this.connect(), 0);
      return;
    }
    const base = this.options.backoffMs ?? 500;
    const delay = Math.min(base * 2 ** this.failures, this.options.maxBackoffMs ?? 30_000);
    this.failures += 1;
    this.options.onTrouble?.('the pod watch ended; restarting it', {
      gone: connection.gone,
      error: connection.error || (err instanceof Error ? err.message : err ? String(err) : null),
      retryInMs: delay,
    });
    this.timer = setTimeout(() => void this.connect(), delay);
  }

  /** A connection that went silent (no event, not even the server's end) is ended and restarted. */
  private armWatchdog(timeoutSeconds: number): void {
    this.clearWatchdog();
    const controller = this.controller;
    if (!controller) return;
    this.watchdog = setTimeout(() => controller.abort(), (timeoutSeconds + 30) * 1000);
    this.watchdog.unref();
  }

  private clearWatchdog(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
  }
}
