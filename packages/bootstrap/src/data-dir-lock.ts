import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isAlive, processStartTime } from './processes';

export const LOCK_FILE = 'server.pid';

export interface DataDirLock {
  path: string;
  /** Removes the lock file, if it is still ours. */
  release(): void;
}

interface LockHolder {
  pid: number;
  /** /proc start time of the holder; absent off Linux or in a hand-written file. */
  startTime?: string;
}

function readHolder(path: string): LockHolder | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const [pidLine, startLine] = text.split('\n');
  const pid = Number(pidLine?.trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const startTime = startLine?.trim();
  return startTime ? { pid, startTime } : { pid };
}

/** The holder is still running: its PID is alive and, where known, started when the lock says. */
function holds(holder: LockHolder): boolean {
  if (!isAlive(holder.pid)) return false;
  return holder.startTime === undefined || holder.startTime === processStartTime(holder.pid);
}

/**
 * Claims `<dataDir>/server.pid` for this process: its PID, then its start time,
 * so a PID reused by an unrelated process after a crash or reboot does not
 * keep the lock. A lock whose holder still runs is refused with its PID; a
 * stale one (its server died, even by SIGKILL) is taken over, and `onStale`
 * says so. The file appears complete or not at all (written aside, then
 * hard-linked into place, which fails if the name exists).
 */
export function acquireDataDirLock(dataDir: string, onStale?: (pid: number) => void): DataDirLock {
  const path = join(dataDir, LOCK_FILE);
  const startTime = processStartTime(process.pid);
  const content = `${process.pid}\n${startTime ?? ''}\n`;
  const staging = `${path}.${process.pid}`;
  writeFileSync(staging, content, { mode: 0o644 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(staging, path);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = readHolder(path);
      if (holder && holds(holder)) {
        throw new Error(
          `SLUICE_DATA_DIR ${resolve(dataDir)} is in use by the sluice server with PID ${holder.pid} ` +
            `(see ${path}); stop that server, or give this one another SLUICE_DATA_DIR`,
        );
      }
      // Taken again right after we removed a stale lock: another server is starting on this directory.
      if (attempt > 0)
        throw new Error(`SLUICE_DATA_DIR ${resolve(dataDir)}: another server is starting on it`);
      if (holder) onStale?.(holder.pid);
      rmSync(path, { force: true });
    }
  } finally {
    rmSync(staging, { force: true });
  }
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      const holder = readHolder(path);
      if (holder?.pid === process.pid) rmSync(path, { force: true });
    },
  };
}
