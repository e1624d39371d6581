import { accessSync, chmodSync, chownSync, constants, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

/**
 * The unprivileged user a root instance runs process tasks as
 * (SLUICE_PROCESS_TASK_USER, docs/decisions.md §13): the runner is spawned
 * with its uid and gid, so neither it nor its task can read the server's data
 * directory, its environment (/proc/<pid>/environ) or anything else only root may.
 */
export interface RunnerUser {
  uid: number;
  gid: number;
  /** For messages: the name, or `uid 1234`. */
  name: string;
}

/**
 * A fresh home for one runner (mode 0700, owned by the user): its HOME,
 * TMPDIR and cwd, where it makes the task's run directory. Created as root
 * in the server's temporary directory; removed when the runner exits.
 */
export function createRunnerHome(user: RunnerUser, parent: string = tmpdir()): string {
  const dir = mkdtempSync(join(parent, 'sluice-task-'));
  try {
    chownSync(dir, user.uid, user.gid);
    chmodSync(dir, 0o700);
  } catch (err) {
    removeRunnerHome(dir);
    throw err;
  }
  return dir;
}

export function removeRunnerHome(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Whether `user` may do `need` (r/x bits) on a file with this stat, as the kernel judges by mode. */
function permits(stat: { mode: number; uid: number; gid: number }, user: RunnerUser, need: number): boolean {
  const shift = stat.uid === user.uid ? 6 : stat.gid === user.gid ? 3 : 0;
  return ((stat.mode >> shift) & need) === need;
}

/**
 * Refuses, at start, a runner command the task user cannot run: its
 * executable and script (node and the sluice entry point, when absolute)
 * must be readable and their directories enterable by that user. A checkout under /root (0700) is
 * the usual case; the message names the directory and the ways out.
 */
export function checkRunnerReachable(runnerCommand: readonly string[], user: RunnerUser): void {
  for (const path of runnerCommand.slice(0, 2).filter((arg) => isAbsolute(arg))) {
    try {
      accessSync(path, constants.F_OK);
    } catch {
      continue; // not a file (an argument that looks like a path); spawning reports a missing command
    }
    const problem = unreachable(path, user);
    if (problem) {
      throw new Error(
        `process tasks run as ${user.name} (SLUICE_PROCESS_TASK_USER), who cannot ${problem}, so the runner ${path} cannot start; ` +
          'install sluice where that user can read it (e.g. under /opt with the default umask 022), make it readable (chmod o+rx), ' +
          'or set SLUICE_PROCESS_TASK_USER to a user who can',
      );
    }
  }
}

function unreachable(path: string, user: RunnerUser): string | null {
  if (!permits(statSync(path), user, 4)) return `read ${path}`;
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (!permits(statSync(dir), user, 1)) return `enter ${dir}`;
    if (dir === dirname(dir)) return null;
  }
}
