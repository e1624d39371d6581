import type { Env } from './reader';

/** Control-plane variables an executor must never hold (and so never pass on to a task). */
export const CONTROL_PLANE_VARS: readonly string[] = [
  'DB_DSN',
  'SLUICE_DATABASE_URL',
  'AUTH_JWT_SECRET',
  'SECRET_ENCRYPTION_KEY',
  'SECRET_ENCRYPTION_KEY_PREVIOUS',
  'SLUICE_MASTER_KEYS',
  'PIPELINE_EXECUTOR_API_TOKEN',
];
const CONTROL_PLANE_PREFIXES: readonly string[] = ['WATERMILL_'];

/**
 * Deletes the control plane's secrets from `env` (process.env at executor
 * start), so an env file shared with the server does not hand them to an
 * executor. Returns the names removed, for one warning each.
 */
export function stripControlPlaneEnv(env: Env): { removed: string[] } {
  const removed = Object.keys(env)
    .filter(
      (name) => CONTROL_PLANE_VARS.includes(name) || CONTROL_PLANE_PREFIXES.some((p) => name.startsWith(p)),
    )
    .sort();
  for (const name of removed) delete env[name];
  return { removed };
}
