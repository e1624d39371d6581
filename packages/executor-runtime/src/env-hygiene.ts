import { stripControlPlaneEnv } from '@sluice/config';
import type { Logger } from '@sluice/executors';

/**
 * Deletes the control plane's secrets (database URL, JWT and master keys, the
 * server's executor token, WATERMILL_*) from this process's environment and
 * logs one warning per variable, by name only. An env file shared with the
 * server must not hand an executor — or anything it starts — those secrets.
 * Returns the names removed.
 */
export function forgetControlPlaneEnv(env: NodeJS.ProcessEnv, log: Pick<Logger, 'warn'>): string[] {
  const { removed } = stripControlPlaneEnv(env);
  for (const name of removed) {
    log.warn(`removed ${name} from the environment: an executor must not hold the control plane's secrets`, {
      variable: name,
    });
  }
  return removed;
}
