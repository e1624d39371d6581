// Sluice's claim store at the store level: claimTaskRuns + completeTaskRun on
// plain pg pools, the calls an instance makes (no HTTP, no runner process).
// Two shapes:
// - `limit 1`: C claimer loops, each claim(limit 1) → complete on its own connection;
// - `batch`: an instance's dispatcher: one loop with C slots claims
//   limit = free slots (docs/decisions.md §3), and a freed slot (handler ended)
//   triggers the next claim; the completions that are pending at once go in one
//   completeTaskRuns call (as graphile-worker's completeJobBatchDelay 0 does).
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import {
  claimTaskRuns,
  createPool,
  insertTaskRun,
  migrate,
  TASK_RUN_QUEUED_CHANNEL,
  type ClaimedTaskRunRow,
} from '@sluice/store';
import { completeTaskRun, completeTaskRuns } from '../lib/completions';
import { queueTaskRuns } from '../lib/queue';
import { now, sleep } from './stats';
import type { QueueSystem } from './types';

const EXECUTION_ID = '00000000-0000-4000-8000-000000000001'; // the one execution queueTaskRuns creates
const CLAIM = { executorTypes: ['process' as const], pools: ['default'] };
/** SLUICE_QUEUE_POLL_INTERVAL's default: the fallback when a notification is lost. */
const POLL_INTERVAL_MS = 1000;

export type SluiceShape = 'limit 1' | 'batch';

async function warmPool(url: string, connections: number): Promise<Pool> {
  const pool = createPool(url, { max: connections });
  const clients = await Promise.all(Array.from({ length: connections }, () => pool.connect()));
  clients.forEach((c) => c.release());
  return pool;
}

async function complete(pool: Pool, run: ClaimedTaskRunRow): Promise<void> {
  await completeTaskRun(pool, { taskRunId: run.id, fence: run.fence, state: 'SUCCEEDED', exitCode: 0 });
}

/**
 * An instance's slot group in miniature: keeps up to `slots` task runs going,
 * claiming `limit = free slots` whenever a slot frees, a notification arrives
 * or the poll interval passes. `onStart` is the handler start.
 */
class Dispatcher {
  private running = 0;
  private claiming = false;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  readonly idle: Promise<void>;
  private resolveIdle!: () => void;

  constructor(
    private readonly pool: Pool,
    private readonly slots: number,
    private readonly onStart: (run: ClaimedTaskRunRow) => void,
    /** Stop once this many have completed (drain); undefined = until stop(). */
    private remaining: number | undefined,
  ) {
    this.idle = new Promise((r) => (this.resolveIdle = r));
  }

  start(pollMs?: number): void {
    if (pollMs) this.timer = setInterval(() => this.wake(), pollMs);
    this.wake();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private scheduled = false;

  /**
   * Asks for a claim on the next macrotask, so the slots that free in one go
   * (a claimed batch whose handlers all end) make one claim for all of them
   * rather than a claim of limit 1 for the first.
   */
  wake(): void {
    if (this.stopped || this.scheduled) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.stopped) void this.claim();
    });
  }

  private async claim(): Promise<void> {
    this.claiming = true;
    try {
      do {
        this.again = false;
        const free = this.slots - this.running;
        if (free <= 0) break;
        const runs = await claimTaskRuns(this.pool, { ownerId: 'bench', ...CLAIM, limit: free });
        for (const run of runs) {
          this.running++;
          this.onStart(run);
          // The no-op handler ends on the next tick; its slot frees then, and its
          // completion is written while the next claim goes out (as an instance
          // frees a slot when the local process ends, not when the store has
          // recorded it).
          void Promise.resolve().then(() => {
            this.running--;
            this.complete(run);
            this.wake();
          });
        }
        if (runs.length === free) this.again = true; // there may be more
      } while (this.again && !this.stopped);
    } finally {
      this.claiming = false;
    }
  }

  private pending: ClaimedTaskRunRow[] = [];
  private flushing = false;

  /** The no-op handler has ended: queue its completion; one flush at a time takes all that are pending. */
  private complete(run: ClaimedTaskRunRow): void {
    this.pending.push(run);
    if (this.flushing) return;
    this.flushing = true;
    // A microtask later, not now: the handlers of one claimed batch end in the
    // same tick, so all of them are pending by then and go out in one
    // statement, instead of the first alone and the rest after it (A/B at
    // C = 16: +3–10 %; setImmediate, which also waits for I/O, gained nothing).
    queueMicrotask(() => void this.flush());
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      const results = await completeTaskRuns(
        this.pool,
        batch.map((run) => ({
          taskRunId: run.id,
          fence: run.fence,
          state: 'SUCCEEDED' as const,
          exitCode: 0,
        })),
      );
      const refused = results.find((r) => r.status === 'rejected');
      if (refused) throw refused.reason;
      this.ended(batch.length);
    }
    this.flushing = false;
  }

  private ended(count: number): void {
    if (this.remaining !== undefined && (this.remaining -= count) <= 0) {
      this.stop();
      this.resolveIdle();
    }
  }
}

export class SluiceSystem implements QueueSystem {
  readonly name: string;
  readonly settings: Record<string, unknown>;

  constructor(
    private readonly url: string,
    private readonly shape: SluiceShape,
  ) {
    this.name = `sluice (${shape})`;
    this.settings =
      shape === 'limit 1'
        ? { claimers: 'C loops, each claimTaskRuns(limit 1) → completeTaskRun, own connection' }
        : {
            dispatcher: 'one per run, C slots, claimTaskRuns(limit = free slots)',
            completions: 'completeTaskRuns of all pending at once, one flush in flight',
            connections: 'C + 1',
            wakeUp: `LISTEN ${TASK_RUN_QUEUED_CHANNEL} + poll every ${POLL_INTERVAL_MS} ms (latency only)`,
          };
  }

  async setup(): Promise<void> {
    await migrate(this.url);
  }

  enqueue(count: number): Promise<void> {
    return queueTaskRuns(this.url, count);
  }

  async drain(count: number, workers: number): Promise<number> {
    if (this.shape === 'batch') {
      const pool = await warmPool(this.url, workers + 1);
      try {
        const started = now();
        const d = new Dispatcher(pool, workers, () => undefined, count);
        d.start();
        await d.idle;
        return (now() - started) / 1000;
      } finally {
        await pool.end();
      }
    }
    const pools = await Promise.all(Array.from({ length: workers }, () => warmPool(this.url, 1)));
    try {
      const started = now();
      let done = 0;
      await Promise.all(
        pools.map(async (pool) => {
          for (;;) {
            const [run] = await claimTaskRuns(pool, { ownerId: 'bench', ...CLAIM, limit: 1 });
            if (!run) return;
            await complete(pool, run);
            done++;
          }
        }),
      );
      if (done !== count) throw new Error(`sluice drain: expected ${count} completions, got ${done}`);
      return (now() - started) / 1000;
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  }

  async latency(ratePerSecond: number, seconds: number, workers: number): Promise<number[]> {
    await queueTaskRuns(this.url, 0); // empty queue, one RUNNING execution to hang runs on
    const pool = await warmPool(this.url, workers + 2);
    const listener: PoolClient = await pool.connect();
    const enqueuedAt = new Map<string, number>();
    const samples: number[] = [];
    const d = new Dispatcher(
      pool,
      workers,
      (run) => {
        const t0 = enqueuedAt.get(run.id);
        if (t0 !== undefined) samples.push(now() - t0);
      },
      undefined,
    );
    listener.on('notification', () => d.wake());
    await listener.query(`LISTEN ${TASK_RUN_QUEUED_CHANNEL}`);
    d.start(POLL_INTERVAL_MS);
    try {
      const total = Math.round(ratePerSecond * seconds);
      const start = now();
      for (let i = 0; i < total; i++) {
        const wait = start + (i * 1000) / ratePerSecond - now();
        if (wait > 0) await sleep(wait);
        const id = randomUUID();
        enqueuedAt.set(id, now());
        await insertTaskRun(pool, {
          id,
          executionId: EXECUTION_ID,
          taskId: `t${i}`,
          attempt: 1,
          maxAttempts: 1,
          executorType: 'process',
          pool: 'default',
          executor: { type: 'process', pool: 'default' },
          spec: { type: 'command', command: ['true'] },
          timeoutMs: 60_000,
        });
      }
      const deadline = now() + 5000;
      while (samples.length < total && now() < deadline) await sleep(5);
      if (samples.length < total) throw new Error(`sluice latency: ${samples.length}/${total} started`);
      return samples;
    } finally {
      d.stop();
      await listener.query(`UNLISTEN ${TASK_RUN_QUEUED_CHANNEL}`);
      listener.release();
      await sleep(50); // let in-flight completions end before the pool closes
      await pool.end();
    }
  }

  async close(): Promise<void> {}
}
