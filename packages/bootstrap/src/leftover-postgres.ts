import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, processName, stopPostmaster } from './processes';

/** The PID PostgreSQL wrote on the first line of `<pgDir>/postmaster.pid`, if any. */
export function postmasterPid(pgDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]?.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A PostgreSQL still running on `pgDir` although no live server holds the
 * data dir: the orphan of a server that died without stopping it (SIGKILL of
 * the server and its supervisor, or a version without one). It would make
 * the new postmaster refuse the data dir, so it is stopped; a stale
 * postmaster.pid naming a dead or unrelated process is left to PostgreSQL,
 * which checks and replaces it itself. Returns the PID stopped and how.
 */
export async function stopLeftoverPostgres(
  pgDir: string,
): Promise<{ pid: number; signal: NodeJS.Signals } | undefined> {
  const pid = postmasterPid(pgDir);
  if (pid === undefined || pid === process.pid || !isAlive(pid)) return undefined;
  // Where /proc says what it is, a reused PID of something else is left alone.
  const name = processName(pid);
  if (name !== undefined && name !== 'postgres') return undefined;
  return { pid, signal: await stopPostmaster(pid) };
}
