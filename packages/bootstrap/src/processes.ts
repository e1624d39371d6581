import { readFileSync } from 'node:fs';

/**
 * Facts about other processes, by PID. On Linux /proc tells a zombie from a
 * live process and gives a start time that tells a reused PID from the
 * original; elsewhere only `kill(pid, 0)` is available.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself contain spaces.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Whether a process with this PID exists and has not exited (a zombie has exited). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists, under another user (PostgreSQL runs as `postgres` when the server is root).
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = procStat(pid)?.[0];
  return state !== 'Z' && state !== 'X';
}

/** When the process started (clock ticks since boot, /proc field 22), or undefined off Linux. */
export function processStartTime(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/** The process's command name (`postgres`, `node`), or undefined when unknown. */
export function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Resolves true once the process is gone, false if it is still there after `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
  return true;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/**
 * Stops a PostgreSQL postmaster that is not our child: fast shutdown (SIGINT,
 * which rolls back open transactions and checkpoints), then immediate
 * shutdown (SIGQUIT, crash recovery at the next start), then SIGKILL.
 * Returns the signal that finally stopped it.
 */
export async function stopPostmaster(
  pid: number,
  timeouts: { fastMs: number; immediateMs: number } = { fastMs: 30_000, immediateMs: 10_000 },
): Promise<NodeJS.Signals> {
  signal(pid, 'SIGINT');
  if (await waitForExit(pid, timeouts.fastMs)) return 'SIGINT';
  signal(pid, 'SIGQUIT');
  if (await waitForExit(pid, timeouts.immediateMs)) return 'SIGQUIT';
  signal(pid, 'SIGKILL');
  await waitForExit(pid, 10_000);
  return 'SIGKILL';
}
