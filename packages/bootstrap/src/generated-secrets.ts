import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDataDir } from './data-dir';

/** Secrets a standalone server generates for itself when none are configured. */
export interface GeneratedSecrets {
  /** AUTH_JWT_SECRET */
  authJwtSecret: string;
  /** One SLUICE_MASTER_KEYS key, base64 of 32 bytes. */
  masterKey: string;
  /** Superuser password of the embedded PostgreSQL. */
  postgresPassword: string;
}

export const SECRETS_FILE = 'secrets.json';

/**
 * Reads `<dataDir>/secrets.json` without creating anything: null when the file
 * is not there (no standalone server has started on this data dir). For
 * commands that must sign with the server's secret, not a new one.
 */
export function loadSecrets(dataDir: string): { secrets: GeneratedSecrets; path: string } | null {
  const path = join(dataDir, SECRETS_FILE);
  if (!existsSync(path)) return null;
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<GeneratedSecrets>;
  if (!parsed.authJwtSecret || !parsed.masterKey || !parsed.postgresPassword) {
    throw new Error(
      `${path} is incomplete: restore it from a backup, or remove the data directory to start afresh`,
    );
  }
  return { secrets: parsed as GeneratedSecrets, path };
}

/**
 * Reads `<dataDir>/secrets.json`, creating it (mode 0600, directory 0700) on
 * first start. Keeping them on disk means tokens and encrypted secrets stay
 * valid across restarts.
 */
export function loadOrCreateSecrets(dataDir: string): {
  secrets: GeneratedSecrets;
  path: string;
  created: boolean;
} {
  ensureDataDir(dataDir);
  const existing = loadSecrets(dataDir);
  if (existing) {
    chmodSync(existing.path, 0o600);
    return { ...existing, created: false };
  }
  const path = join(dataDir, SECRETS_FILE);
  const secrets: GeneratedSecrets = {
    authJwtSecret: randomBytes(32).toString('base64url'),
    masterKey: randomBytes(32).toString('base64'),
    postgresPassword: randomBytes(18).toString('base64url'),
  };
  writeFileSync(path, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return { secrets, path, created: true };
}
