// graphile-worker, configured as its performance docs suggest for throughput
// (worker.graphile.org/docs/performance): one runner with concurrency C, a
// local queue of C + 1 (batch-fetch and lock jobs up front), completions
// batched (completeJobBatchDelay 0: batch whatever is pending, add no wait),
// prepared statements on (default), LISTEN/NOTIFY wake-up (built in) with the
// default 2 s poll, pool of max(10, C + 2) as its docs advise.
// Also run without the local queue (its default): each of the C workers then
// fetches one job when it is free, which is how a Sluice instance claims
// (only for free slots, docs/decisions.md §3) — the like-for-like comparison.
import { Pool } from 'pg';
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import { installedVersion, now, sleep, waitForZero } from './stats';
import type { QueueSystem } from './types';

const silent = new Logger(() => () => undefined);
const TASK = 'noop';

export class GraphileSystem implements QueueSystem {
  readonly name: string;
  readonly settings: Record<string, unknown>;
  private utils!: WorkerUtils;
  private admin!: Pool;

  /** `localQueue`: fetch and lock C + 1 jobs ahead (its throughput advice) or fetch one per free worker. */
  constructor(
    private readonly url: string,
    private readonly localQueue: boolean,
  ) {
    this.name = localQueue ? 'graphile-worker' : 'graphile-worker (no local queue)';
    this.settings = {
      version: installedVersion('graphile-worker'),
      concurrentJobs: 'C',
      'localQueue.size': localQueue ? 'C + 1' : 'off (one job per free worker)',
      completeJobBatchDelay: 0,
      pollInterval: 2000,
      maxPoolSize: 'max(10, C + 2)',
      preparedStatements: true,
      enqueue: 'WorkerUtils.addJobs in chunks of 1000 (drain); addJob (latency)',
    };
  }

  async setup(): Promise<void> {
    this.utils = await makeWorkerUtils({ connectionString: this.url, logger: silent });
    await this.utils.migrate();
    this.admin = new Pool({ connectionString: this.url, max: 1 });
  }

  async enqueue(count: number): Promise<void> {
    await this.admin.query('DELETE FROM graphile_worker._private_jobs');
    for (let i = 0; i < count; i += 1000) {
      const specs = Array.from({ length: Math.min(1000, count - i) }, (_, k) => ({
        identifier: TASK,
        payload: { i: i + k },
      }));
      await this.utils.addJobs(specs);
    }
    await this.admin.query('VACUUM ANALYZE');
  }

  private async start(
    workers: number,
    onStart: (payload: unknown) => void,
  ): Promise<{ runner: Runner; pool: Pool }> {
    const poolSize = Math.max(10, workers + 2);
    const pool = new Pool({ connectionString: this.url, max: poolSize });
    // Idle clients' lost connections must not crash the bench (graphile-worker checks these are set).
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    const clients = await Promise.all(Array.from({ length: poolSize }, () => pool.connect()));
    clients.forEach((c) => c.release());
    const runner = await run({
      pgPool: pool,
      noHandleSignals: true,
      logger: silent,
      taskList: {
        [TASK]: async (payload) => {
          onStart(payload);
        },
      },
      preset: {
        worker: {
          concurrentJobs: workers,
          maxPoolSize: poolSize,
          pollInterval: 2000,
          ...(this.localQueue ? { localQueue: { size: workers + 1 } } : {}),
          completeJobBatchDelay: 0,
        },
      },
    });
    return { runner, pool };
  }

  async drain(count: number, workers: number): Promise<number> {
    let started = 0;
    let allStarted!: () => void;
    const done = new Promise<void>((r) => (allStarted = r));
    // The clock includes the runner's start (its pool is connected first); tens of ms.
    const t0 = now();
    const { runner, pool } = await this.start(workers, () => {
      if (++started === count) allStarted();
    });
    try {
      await done;
      // Completions are batched: the queue is drained when the last row is deleted.
      await waitForZero(this.admin, 'SELECT count(*) AS n FROM graphile_worker._private_jobs');
      return (now() - t0) / 1000;
    } finally {
      await runner.stop();
      await pool.end();
    }
  }

  async latency(ratePerSecond: number, seconds: number, workers: number): Promise<number[]> {
    await this.admin.query('DELETE FROM graphile_worker._private_jobs');
    const samples: number[] = [];
    const { runner, pool } = await this.start(workers, (payload) => {
      samples.push(now() - (payload as { t: number }).t);
    });
    try {
      await sleep(200); // the runner's LISTEN is in place
      const total = Math.round(ratePerSecond * seconds);
      const start = now();
      for (let i = 0; i < total; i++) {
        const wait = start + (i * 1000) / ratePerSecond - now();
        if (wait > 0) await sleep(wait);
        await this.utils.addJob(TASK, { t: now() });
      }
      const deadline = now() + 5000;
      while (samples.length < total && now() < deadline) await sleep(5);
      if (samples.length < total)
        throw new Error(`graphile-worker latency: ${samples.length}/${total} started`);
      return samples;
    } finally {
      await runner.stop();
      await pool.end();
    }
  }

  async close(): Promise<void> {
    await this.utils?.release();
    await this.admin?.end();
  }
}
