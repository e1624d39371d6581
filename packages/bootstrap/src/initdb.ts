import { execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PostgresBinaries } from './postgres-binaries';

/** The user PostgreSQL runs as: unset when the server is not root (it runs as the server's user). */
export interface PostgresUser {
  uid: number;
  gid: number;
}

function idOf(flag: '-u' | '-g'): number | undefined {
  try {
    return Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: 'pipe' }).trim());
  } catch {
    return undefined;
  }
}

/**
 * PostgreSQL refuses to run as root: a root server runs it as the `postgres`
 * system user, created (with its group) when missing.
 */
export function postgresUser(): PostgresUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (idOf('-u') === undefined) {
    try {
      execFileSync('groupadd', ['-f', 'postgres'], { stdio: 'pipe' });
      execFileSync('useradd', ['-r', '-g', 'postgres', '-s', '/usr/sbin/nologin', 'postgres'], {
        stdio: 'pipe',
      });
    } catch (err) {
      throw new Error(
        `running as root, the embedded PostgreSQL needs a postgres user, and creating it failed: ${String(err)}`,
      );
    }
  }
  const uid = idOf('-u');
  const gid = idOf('-g');
  if (uid === undefined || gid === undefined) throw new Error('the postgres user has no uid or gid');
  return { uid, gid };
}

/**
 * Creates a new cluster in `pgDir` (which must not exist or be empty) whose
 * superuser `postgres` has `password`. UTF-8 with the built-in C.UTF-8
 * locale, so the database behaves the same whatever locales the host has.
 */
export async function initdb(opts: {
  binaries: PostgresBinaries;
  pgDir: string;
  /** Where the password file is written for the moment initdb reads it (the server's data dir). */
  scratchDir: string;
  password: string;
  user: PostgresUser | undefined;
}): Promise<void> {
  const { pgDir, user } = opts;
  mkdirSync(pgDir, { recursive: true, mode: 0o700 });
  const passwordFile = join(opts.scratchDir, `.postgres-password.${process.pid}`);
  writeFileSync(passwordFile, `${opts.password}\n`, { mode: 0o600 });
  try {
    if (user) {
      chownSync(pgDir, user.uid, user.gid);
      chownSync(passwordFile, user.uid, user.gid);
    }
    const args = [
      `--pgdata=${pgDir}`,
      '--username=postgres',
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
    ];
    const output = await new Promise<{ code: number | null; text: string }>((resolve, reject) => {
      const child = spawn(opts.binaries.initdb, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LC_ALL: 'C' },
        ...(user ?? {}),
      });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, text }));
    });
    if (output.code !== 0) {
      throw new Error(`initdb exited with ${output.code ?? 'a signal'}: ${output.text.trim()}`);
    }
  } finally {
    rmSync(passwordFile, { force: true });
  }
}
