// pg-boss (v10; v11+ needs Node 22), configured for throughput as its docs
// describe: C `work()` workers on one queue, each fetching `batchSize` jobs
// per poll and completing the batch in one statement when the handler
// resolves; polling at the 0.5 s minimum (pg-boss has no LISTEN wake-up: a
// worker polls again at once only while its fetches keep returning jobs, else
// it waits out the interval). Cron scheduling off (not used here).
import { Pool } from 'pg';
import PgBoss from 'pg-boss';
import { installedVersion, now, sleep, waitForZero } from './stats';
import type { QueueSystem } from './types';

const QUEUE = 'noop';
const BATCH_SIZE = 100;
const POLLING_INTERVAL_SECONDS = 0.5;

export class PgBossSystem implements QueueSystem {
  readonly name = 'pg-boss';
  readonly settings = {
    version: installedVersion('pg-boss'),
    workers: 'C work() calls on one queue',
    batchSize: BATCH_SIZE,
    pollingIntervalSeconds: POLLING_INTERVAL_SECONDS,
    max: 'max(10, C + 2) connections',
    schedule: false,
    enqueue: 'insert() in chunks of 1000 (drain); send() (latency)',
  };
  private admin!: Pool;

  constructor(private readonly url: string) {}

  private async boss(workers: number): Promise<PgBoss> {
    const boss = new PgBoss({ connectionString: this.url, max: Math.max(10, workers + 2), schedule: false });
    boss.on('error', (err) => console.error('pg-boss:', err));
    await boss.start();
    return boss;
  }

  async setup(): Promise<void> {
    const boss = await this.boss(1); // installs the schema
    await boss.createQueue(QUEUE);
    await boss.stop({ graceful: false, wait: true });
    this.admin = new Pool({ connectionString: this.url, max: 1 });
  }

  private clear(): Promise<unknown> {
    return this.admin.query('DELETE FROM pgboss.job WHERE name = $1', [QUEUE]);
  }

  async enqueue(count: number): Promise<void> {
    await this.clear();
    const boss = await this.boss(1);
    try {
      for (let i = 0; i < count; i += 1000) {
        await boss.insert(
          Array.from({ length: Math.min(1000, count - i) }, (_, k) => ({ name: QUEUE, data: { i: i + k } })),
        );
      }
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
    await this.admin.query('VACUUM ANALYZE');
  }

  private async work(boss: PgBoss, workers: number, onStart: (data: unknown) => void): Promise<void> {
    for (let w = 0; w < workers; w++) {
      await boss.work(
        QUEUE,
        { batchSize: BATCH_SIZE, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS },
        async (jobs) => {
          for (const job of jobs) onStart(job.data);
        },
      );
    }
  }

  async drain(count: number, workers: number): Promise<number> {
    const boss = await this.boss(workers);
    try {
      let started = 0;
      let allStarted!: () => void;
      const done = new Promise<void>((r) => (allStarted = r));
      const t0 = now();
      await this.work(boss, workers, () => {
        if (++started === count) allStarted();
      });
      await done;
      // Each batch completes after its handler resolves.
      await waitForZero(
        this.admin,
        "SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state <> 'completed'",
        [QUEUE],
      );
      return (now() - t0) / 1000;
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
  }

  async latency(ratePerSecond: number, seconds: number, workers: number): Promise<number[]> {
    await this.clear();
    const boss = await this.boss(workers);
    const samples: number[] = [];
    try {
      await this.work(boss, workers, (data) => samples.push(now() - (data as { t: number }).t));
      const total = Math.round(ratePerSecond * seconds);
      const start = now();
      for (let i = 0; i < total; i++) {
        const wait = start + (i * 1000) / ratePerSecond - now();
        if (wait > 0) await sleep(wait);
        await boss.send(QUEUE, { t: now() });
      }
      const deadline = now() + 5000;
      while (samples.length < total && now() < deadline) await sleep(5);
      if (samples.length < total) throw new Error(`pg-boss latency: ${samples.length}/${total} started`);
      return samples;
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
  }

  async close(): Promise<void> {
    await this.admin?.end();
  }
}
