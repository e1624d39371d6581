import { hostname } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import type { EnvReader } from './reader';
import { ownerId, splitHostPort } from './schemas';
import { resolveTaskUser, type ProcessTaskUser, type TaskUserHost } from './task-user';
import {
  K8S_EXECUTOR_OWNER_ID,
  K8S_EXECUTOR_OWNER_ID_PREFIX,
  SECRET_ENCRYPTION_KEY,
  SECRET_ENCRYPTION_KEY_PREVIOUS,
  SLUICE_MASTER_KEYS,
  SLUICE_PROCESS_TASK_USER,
} from './vars';

/** Values computed from several variables, or from the host. */

/** HOSTNAME when set (tests and containers), else the OS hostname. */
export function hostName(reader: EnvReader): string {
  return reader.raw('HOSTNAME')?.trim() ?? hostname();
}

/**
 * SLUICE_MASTER_KEYS, or SECRET_ENCRYPTION_KEY followed by
 * SECRET_ENCRYPTION_KEY_PREVIOUS. Both spellings set to different keys is an
 * error: silently preferring one could encrypt with a key the operator retired.
 */
export function masterKeys(reader: EnvReader): Buffer[] {
  const listed = reader.get(SLUICE_MASTER_KEYS);
  const current = reader.get(SECRET_ENCRYPTION_KEY);
  const previous = reader.get(SECRET_ENCRYPTION_KEY_PREVIOUS);
  if (reader.isSet(SECRET_ENCRYPTION_KEY_PREVIOUS) && !reader.isSet(SECRET_ENCRYPTION_KEY)) {
    reader.problem(
      SECRET_ENCRYPTION_KEY_PREVIOUS.name,
      `is set without ${SECRET_ENCRYPTION_KEY.name}; set the current key too (or use ${SLUICE_MASTER_KEYS.name})`,
    );
  }
  const legacy = current ? [current, ...(previous ? [previous] : [])] : undefined;
  if (listed && legacy && !isDeepStrictEqual(listed, legacy)) {
    reader.problem(
      `${SLUICE_MASTER_KEYS.name} and ${SECRET_ENCRYPTION_KEY.name}`,
      `both are set to different keys; they mean the same, so set only ${SLUICE_MASTER_KEYS.name}`,
    );
  }
  return listed ?? legacy ?? [];
}

/**
 * The kubernetes owner ID: K8S_EXECUTOR_OWNER_ID, or the prefix plus the
 * StatefulSet ordinal at the end of the hostname. With `required`, neither
 * being set is a problem; setting both always is.
 */
export function k8sOwnerId(reader: EnvReader, required: boolean): string | undefined {
  const fixed = reader.get(K8S_EXECUTOR_OWNER_ID);
  const prefix = reader.get(K8S_EXECUTOR_OWNER_ID_PREFIX);
  const fixedSet = reader.isSet(K8S_EXECUTOR_OWNER_ID);
  const prefixSet = reader.isSet(K8S_EXECUTOR_OWNER_ID_PREFIX);
  if (fixedSet && prefixSet) {
    reader.problem(
      `${K8S_EXECUTOR_OWNER_ID.name} and ${K8S_EXECUTOR_OWNER_ID_PREFIX.name}`,
      'both are set; set only one',
    );
    return undefined;
  }
  if (fixed) return fixed;
  if (prefix) {
    const host = hostName(reader);
    const ordinal = /-(\d+)$/.exec(host)?.[1];
    if (ordinal === undefined) {
      reader.problem(
        K8S_EXECUTOR_OWNER_ID_PREFIX.name,
        `needs a hostname ending in -<ordinal> (a StatefulSet pod name), but the hostname is ${JSON.stringify(host)}`,
      );
      return undefined;
    }
    const id = `${prefix}-${ordinal}`;
    if (!ownerId().safeParse(id).success) {
      reader.problem(
        K8S_EXECUTOR_OWNER_ID_PREFIX.name,
        `makes the owner ID ${JSON.stringify(id)}, longer than 63 characters`,
      );
      return undefined;
    }
    return id;
  }
  if (required && !fixedSet && !prefixSet) {
    reader.problem(
      `${K8S_EXECUTOR_OWNER_ID.name} or ${K8S_EXECUTOR_OWNER_ID_PREFIX.name}`,
      'one is required: the owner ID labels every Job and Secret this executor creates and limits its cleanup to them',
    );
  }
  return undefined;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

/** The URL local runners use to reach this process's internal API. */
export function localInternalUrl(internalAddr: string): string {
  const split = splitHostPort(internalAddr);
  if (!split) return 'http://127.0.0.1:8081'; // only reached when the address is invalid, which is reported already
  const host = WILDCARD_HOSTS.has(split.host)
    ? '127.0.0.1'
    : split.host.includes(':')
      ? `[${split.host}]`
      : split.host;
  return `http://${host}:${split.port}`;
}

/**
 * SLUICE_PROCESS_TASK_USER as the process executor needs it. As root, the
 * user (default nobody) must exist, else the start stops naming the
 * variable; naming root itself keeps tasks as root (null). A server that is
 * not root cannot start tasks as anyone else, so setting the variable to
 * another user is an error rather than a silent no-op.
 */
export function processTaskUser(reader: EnvReader, host: TaskUserHost): ProcessTaskUser | null {
  const def = SLUICE_PROCESS_TASK_USER;
  const set = reader.isSet(def);
  const spec = reader.get(def);
  if (spec === undefined || host.uid === undefined) return null;
  if (host.uid !== 0 && !set) return null;
  const label = set ? def.name : `${def.name} (default ${def.default})`;
  const user = resolveTaskUser(spec, host);
  if (typeof user === 'string') {
    reader.problem(label, user);
    return null;
  }
  if (host.uid !== 0 && user.uid !== host.uid) {
    reader.problem(
      label,
      `names ${user.name}, but this process runs as uid ${host.uid}, not root, and cannot start tasks as another user; unset it (process tasks then run as uid ${host.uid})`,
    );
    return null;
  }
  return user.uid === host.uid ? null : user;
}
