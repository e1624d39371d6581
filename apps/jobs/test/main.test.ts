import { EventEmitter } from 'node:events';
import { captureOutput, createTestDatabase, type TestDatabase } from '@sluice/testing';
import { main } from '../src/main';

/** main() in this process, its terminal in memory. */
const io = captureOutput;

describe('sluice jobs', () => {
  it('prints usage and the variables it reads for --help', async () => {
    const run = io();
    expect(await main(['jobs', '--help'], run.io)).toBe(0);
    expect(run.out()).toContain('Usage: sluice jobs');
    expect(run.out()).toContain('SLUICE_DATABASE_URL (or DB_DSN)');
    expect(run.out()).toContain('PIPELINE_HEARTBEAT_TIMEOUT [default: 30s]');
    expect(run.out()).not.toContain('HTTP_SERVER_ADDR [default: 0.0.0.0:8080]');
  });

  it('exits 2 naming the missing database URL', async () => {
    const run = io();
    expect(await main(['jobs'], run.io)).toBe(2);
    expect(run.err()).toContain('SLUICE_DATABASE_URL or DB_DSN');
  });

  it('refuses unknown arguments', async () => {
    const run = io();
    expect(await main(['jobs', '--frobnicate'], run.io)).toBe(2);
    expect(run.err()).toContain('unknown argument --frobnicate');
  });

  it('exits 1 naming the database when it cannot reach it', async () => {
    const run = io({ DB_DSN: 'postgres://u:p@127.0.0.1:1/sluice', INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0' });
    expect(await main(['jobs'], run.io)).toBe(1);
    expect(run.err()).toMatch(/^sluice jobs: .*ECONNREFUSED.*127\.0\.0\.1:1/);
  });
});

describe('sluice jobs running', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  /** Starts main in this process; resolves once it logged its internal URL. */
  async function start() {
    const run = io({ DB_DSN: db.url, INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0' });
    const signals = new EventEmitter();
    const exited = main(['jobs'], { ...run.io, signals });
    for (;;) {
      const started = run
        .out()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { message: string; internal?: string; internalAddress?: string })
        .find((line) => line.message === 'jobs started');
      if (started?.internal) {
        return { run, signals, exited, internal: started.internal, address: started.internalAddress };
      }
      const early = await Promise.race([exited, new Promise((r) => setTimeout(r, 20, 'running'))]);
      if (early !== 'running') throw new Error(`main exited ${String(early)} before starting: ${run.err()}`);
    }
  }

  it('serves /live, /ready and /metrics, and exits 0 on SIGTERM', async () => {
    const { signals, exited, internal, run, address } = await start();
    // issue 12: the log shows the address bound, with the real port of 127.0.0.1:0.
    expect(address).toBe(`127.0.0.1:${new URL(internal).port}`);
    expect((await fetch(`${internal}/live`)).status).toBe(200);
    const ready = await fetch(`${internal}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok' });
    const metrics = await (await fetch(`${internal}/metrics`)).text();
    expect(metrics).toContain('sluice_watchdog_failures_total');
    expect(metrics).toContain('service="jobs"');

    signals.emit('SIGTERM', 'SIGTERM');
    expect(await exited).toBe(0);
    expect(run.out()).toContain('"message":"stopped"');
    await expect(fetch(`${internal}/live`)).rejects.toThrow();
  });

  it('stops cleanly when the signal arrives while it is still starting', async () => {
    const run = io({ DB_DSN: db.url, INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0' });
    const signals = new EventEmitter();
    const exited = main(['jobs'], { ...run.io, signals });
    signals.emit('SIGINT', 'SIGINT');
    expect(await exited).toBe(0);
    expect(run.out()).toContain('"message":"jobs started"');
    expect(run.out()).toContain('"message":"stopped"');
  });
});
