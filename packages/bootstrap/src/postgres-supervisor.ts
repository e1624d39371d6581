import { spawn, type ChildProcess } from 'node:child_process';
import type { PostgresUser } from './initdb';

/**
 * The watchdog between the server and its PostgreSQL, run as `node -e`: it
 * starts postgres and stops it when its stdin (a pipe from the server) ends,
 * which happens whenever the server exits, SIGKILL included, since the kernel
 * closes the dead process's end of the pipe. It ignores SIGINT, SIGTERM and
 * SIGHUP: a Ctrl+C or a closed terminal reaches the whole process group, and
 * the server, not the signal, decides when its database goes (after its own
 * drain). postgres gets a process group of its own for the same reason.
 * Shutdown is fast (SIGINT), then immediate (SIGQUIT), then SIGKILL. Kept in
 * one string so it runs the same from sources, dist or a deployed copy.
 */
const SUPERVISOR_SOURCE = String.raw`
'use strict';
process.title = 'sluice-postgres-supervisor';
const { spawn } = require('node:child_process');
const spec = JSON.parse(process.argv[1]);
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => undefined);
const say = (m) => process.stderr.write('sluice postgres supervisor: ' + m + '\n');
const pg = spawn(spec.command, spec.args, {
  stdio: ['ignore', 'ignore', 'inherit'],
  detached: true,
  ...(spec.user || {}),
});
let stopping = false;
const stop = (why) => {
  if (stopping) return;
  stopping = true;
  say(why + ', stopping PostgreSQL (pid ' + pg.pid + ')');
  const kill = (signal) => { try { pg.kill(signal); } catch {} };
  kill('SIGINT');
  setTimeout(() => kill('SIGQUIT'), spec.fastShutdownMs).unref();
  setTimeout(() => kill('SIGKILL'), spec.fastShutdownMs + spec.immediateShutdownMs).unref();
};
pg.on('error', (err) => { say('cannot start ' + spec.command + ': ' + err.message); process.exit(127); });
pg.on('exit', (code, signal) => {
  if (!stopping) say('PostgreSQL exited on its own (' + (signal || 'code ' + code) + ')');
  process.exit(code === null ? 1 : code);
});
process.stdin.on('data', () => undefined);
process.stdin.on('end', () => stop('the server is gone'));
process.stdin.on('error', () => stop('the server is gone'));
`;

export interface SupervisedPostgres {
  /** PID of the supervisor (postgres is its child; its PID is in postmaster.pid). */
  pid: number;
  /** Resolves with the supervisor's exit code once it (and so postgres) has exited. */
  exited: Promise<number | null>;
  /** Asks for the shutdown and waits for it. */
  stop(): Promise<number | null>;
}

export function startSupervisedPostgres(opts: {
  postgres: string;
  args: string[];
  user: PostgresUser | undefined;
  /** File descriptor postgres (and the supervisor) write their log to. */
  logFd: number;
  fastShutdownMs?: number;
  immediateShutdownMs?: number;
}): SupervisedPostgres {
  const spec = {
    command: opts.postgres,
    args: opts.args,
    user: opts.user,
    fastShutdownMs: opts.fastShutdownMs ?? 30_000,
    immediateShutdownMs: opts.immediateShutdownMs ?? 10_000,
  };
  const child: ChildProcess = spawn(process.execPath, ['-e', SUPERVISOR_SOURCE, JSON.stringify(spec)], {
    stdio: ['pipe', 'ignore', opts.logFd],
    // Inherited by postgres: none of the server's secrets; messages in English whatever the
    // host's locale, so the log lines quoted in errors are readable.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_MESSAGES: 'C' },
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
  // The pipe stays open for the server's lifetime; it must not keep the server's event loop alive.
  child.unref();
  const stdin = child.stdin!;
  stdin.on('error', () => undefined);
  (stdin as unknown as { unref?: () => void }).unref?.();
  return {
    pid: child.pid ?? -1,
    exited,
    async stop() {
      // Now the server waits for it: its exit is what tells the server PostgreSQL is down.
      child.ref();
      stdin.end();
      return exited;
    },
  };
}
