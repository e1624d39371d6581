import { setTimeout as sleep } from 'node:timers/promises';
import { LogLine, LogStream, RunnerApiError } from '@sluice/protocol';
import { isOwnershipLost } from './ownership';

export interface LogShipperOptions {
  send: (lines: LogLine[]) => Promise<unknown>;
  /** Runner diagnostics (never task output). */
  log: (message: string) => void;
  /** Called with true when the queue is too long (pause the task's output), false when it has drained. */
  onPressure?: (paused: boolean) => void;
  /** The server said this task run is no longer ours (stale fence or revoked token). */
  onOwnershipLost?: (error: Error) => void;
  batchLines?: number;
  flushIntervalMs?: number;
  maxQueuedLines?: number;
  retryDelayMs?: number;
  /** Applied to every line as it is written (the runner masks secret values with it). */
  mask?: (line: string) => string;
}

/**
 * Numbers every line (1-based, gap-free, across stdout, stderr and system) and
 * sends them in order, in batches, one batch in flight at a time. A failed
 * batch stays at the head of the queue and is sent again with the same seqs
 * (the server keeps the first copy of each), so lines are neither lost,
 * reordered nor duplicated. Sending never blocks the task; a long queue asks
 * the caller to pause the task's output instead of growing without bound.
 */
export class LogShipper {
  private readonly queue: LogLine[] = [];
  private nextSeq = 1;
  private inflight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private retryNotBefore = 0;
  private paused = false;
  private abandoned = false;
  private readonly batchLines: number;
  private readonly flushIntervalMs: number;
  private readonly maxQueuedLines: number;
  private readonly retryDelayMs: number;

  constructor(private readonly options: LogShipperOptions) {
    this.batchLines = options.batchLines ?? 500;
    this.flushIntervalMs = options.flushIntervalMs ?? 200;
    this.maxQueuedLines = options.maxQueuedLines ?? 50_000;
    this.retryDelayMs = options.retryDelayMs ?? 1_000;
  }

  /** Starts periodic sending; lines written before are kept and go first. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.kick(), this.flushIntervalMs);
  }

  write(stream: LogStream, line: string): void {
    if (this.abandoned) return;
    const text = this.options.mask ? this.options.mask(line) : line;
    this.queue.push({ seq: this.nextSeq++, stream, line: text, ts: new Date().toISOString() });
    if (this.timer && this.queue.length >= this.batchLines) this.kick();
    if (!this.paused && this.queue.length >= this.maxQueuedLines) {
      this.paused = true;
      this.options.onPressure?.(true);
    }
  }

  get queuedLines(): number {
    return this.queue.length;
  }

  /**
   * Sends what is left, until the queue is empty or `timeoutMs` has passed.
   * Returns the number of lines that could not be delivered.
   */
  async close(timeoutMs: number): Promise<number> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length > 0 && !this.abandoned) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      if (!this.inflight) {
        const wait = this.retryNotBefore - Date.now();
        if (wait > 0) {
          await sleep(Math.min(wait, remaining));
          continue;
        }
        this.inflight = this.sendHead().finally(() => (this.inflight = null));
      }
      const timeout = new AbortController();
      await Promise.race([
        this.inflight,
        sleep(remaining, undefined, { signal: timeout.signal }).catch(() => {}),
      ]);
      timeout.abort();
    }
    return this.abandoned ? 0 : this.queue.length;
  }

  /** Drops everything: the task run belongs to someone else now. */
  abandon(): void {
    this.abandoned = true;
    this.queue.length = 0;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private kick(): void {
    const idle = !this.inflight && !this.abandoned && this.queue.length > 0;
    if (!idle || Date.now() < this.retryNotBefore) return;
    this.inflight = this.sendHead().finally(() => {
      this.inflight = null;
      if (this.timer && this.queue.length >= this.batchLines) this.kick();
    });
  }

  private async sendHead(): Promise<void> {
    const batch = this.queue.slice(0, this.batchLines);
    try {
      await this.options.send(batch);
      this.dropHead(batch.length);
    } catch (error) {
      if (this.abandoned) return;
      const first = batch[0]!.seq;
      const last = batch[batch.length - 1]!.seq;
      if (isOwnershipLost(error)) {
        this.abandon();
        this.options.onOwnershipLost?.(error as Error);
      } else if (
        error instanceof RunnerApiError &&
        error.status !== null &&
        error.status < 500 &&
        error.status !== 429
      ) {
        // The server refused this batch as such; sending it again cannot help.
        this.options.log(`log lines ${first}-${last} dropped: ${error.message}`);
        this.dropHead(batch.length);
      } else {
        this.options.log(
          `log lines ${first}-${last} not delivered yet, will resend: ${(error as Error).message}`,
        );
        this.retryNotBefore = Date.now() + this.retryDelayMs;
      }
    }
  }

  private dropHead(count: number): void {
    this.queue.splice(0, count);
    if (this.paused && this.queue.length <= this.maxQueuedLines / 2) {
      this.paused = false;
      this.options.onPressure?.(false);
    }
  }
}
