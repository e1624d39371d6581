import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { EnvSchema } from './schemas';

/** SLUICE_PROCESS_TASK_USER as written: a user name, or a numeric uid with an optional gid. */
export type TaskUserSpec = { name: string } | { uid: number; gid?: number };

/** The user process tasks run as: what the process executor passes to spawn. */
export interface ProcessTaskUser {
  uid: number;
  gid: number;
  /** For logs and messages: the name, or `uid 1234`. */
  name: string;
}

const USER_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$/;
const UID_GID = /^(\d{1,10})(?::(\d{1,10}))?$/;

/** A user name (`nobody`) or `uid[:gid]` (`65534`, `1000:1000`). */
export function taskUser(): EnvSchema<TaskUserSpec> {
  return z.string().transform((raw, ctx): TaskUserSpec => {
    const value = raw.trim();
    const ids = UID_GID.exec(value);
    if (ids) {
      const uid = Number(ids[1]);
      const gid = ids[2] === undefined ? undefined : Number(ids[2]);
      if (uid <= 0xfffffffe && (gid === undefined || gid <= 0xfffffffe))
        return gid === undefined ? { uid } : { uid, gid };
    } else if (USER_NAME.test(value)) {
      return { name: value };
    }
    ctx.addIssue({
      code: 'custom',
      message: 'expected a user name (such as nobody) or uid[:gid] (such as 65534:65534)',
    });
    return z.NEVER;
  });
}

/** One passwd entry: name, uid and primary gid. */
export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
}

/** What resolving a task user needs from the host; tests pass their own. */
export interface TaskUserHost {
  /** The server's uid; undefined where there are no uids (Windows). */
  uid: number | undefined;
  /** The passwd entry of a name or uid, or null when the host has none. */
  lookup(key: string | number): PasswdEntry | null;
}

function parsePasswdLine(line: string): PasswdEntry | null {
  const [name, , uid, gid] = line.split(':');
  if (!name || uid === undefined || gid === undefined || !/^\d+$/.test(uid) || !/^\d+$/.test(gid))
    return null;
  return { name, uid: Number(uid), gid: Number(gid) };
}

/** /etc/passwd first (no process to start), then `getent passwd` for users from NSS (LDAP, sssd). */
export function lookupPasswd(key: string | number): PasswdEntry | null {
  const matches = (entry: PasswdEntry | null): boolean =>
    entry !== null && (typeof key === 'number' ? entry.uid === key : entry.name === key);
  try {
    const found = readFileSync('/etc/passwd', 'utf8').split('\n').map(parsePasswdLine).find(matches);
    if (found) return found;
  } catch {
    // No /etc/passwd: getent may still know the user.
  }
  try {
    const out = execFileSync('getent', ['passwd', String(key)], {
      encoding: 'utf8',
      stdio: 'pipe',
      timeout: 5_000,
    });
    const entry = parsePasswdLine(out.trim().split('\n')[0] ?? '');
    return matches(entry) ? entry : null;
  } catch {
    return null;
  }
}

export const REAL_HOST: TaskUserHost = { uid: process.getuid?.(), lookup: lookupPasswd };

/** The uid and gid of a spec, or why it has none. */
export function resolveTaskUser(spec: TaskUserSpec, host: TaskUserHost): ProcessTaskUser | string {
  if ('name' in spec) {
    const entry = host.lookup(spec.name);
    if (!entry)
      return `no user ${JSON.stringify(spec.name)} on this host; name an existing user or give uid:gid`;
    return { uid: entry.uid, gid: entry.gid, name: entry.name };
  }
  const entry = host.lookup(spec.uid);
  const gid = spec.gid ?? entry?.gid;
  if (gid === undefined)
    return `uid ${spec.uid} has no passwd entry on this host, so its group is unknown; give it as uid:gid`;
  return { uid: spec.uid, gid, name: entry?.name ?? `uid ${spec.uid}` };
}
