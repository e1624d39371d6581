import { loadOrCreateSecrets } from '@sluice/bootstrap';
import type { ServerConfig } from '@sluice/config';

export interface ServerSecrets {
  jwtSecret: string;
  masterKeys: Buffer[];
  /** Set when the secrets came from (or were written to) the data directory. */
  generatedAt?: string;
  created?: boolean;
  postgresPassword?: string;
}

/**
 * A standalone server without AUTH_JWT_SECRET or master keys uses (and on
 * first start generates) the ones under SLUICE_DATA_DIR; configured values
 * always win.
 */
export function resolveServerSecrets(config: ServerConfig, standalone: boolean): ServerSecrets {
  const needsGenerated =
    standalone && (!config.authJwtSecret || config.masterKeys.length === 0 || !config.databaseUrl);
  if (!needsGenerated) {
    if (!config.authJwtSecret || config.masterKeys.length === 0) {
      throw new Error('AUTH_JWT_SECRET and SLUICE_MASTER_KEYS are required without --standalone');
    }
    return { jwtSecret: config.authJwtSecret, masterKeys: config.masterKeys };
  }
  const { secrets, path, created } = loadOrCreateSecrets(config.dataDir);
  return {
    jwtSecret: config.authJwtSecret ?? secrets.authJwtSecret,
    masterKeys: config.masterKeys.length > 0 ? config.masterKeys : [Buffer.from(secrets.masterKey, 'base64')],
    generatedAt: path,
    created,
    postgresPassword: secrets.postgresPassword,
  };
}
