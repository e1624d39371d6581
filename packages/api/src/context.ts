import type { Store } from '@sluice/store';
import type { Engine } from '@sluice/engine';
import type { SecretKeyring } from '@sluice/secrets';

/** What the public API's routes need; built once by the server app. */
export interface PublicApiContext {
  /** The database: routes read and write it through @sluice/store's functions. */
  store: Store;
  engine: Engine;
  keyring: SecretKeyring;
  /** AUTH_JWT_SECRET */
  jwtSecret: string;
  /** PIPELINE_EXECUTOR_SILENCE_TIMEOUT: instances that reported within it are online. */
  executorSilenceTimeoutMs: number;
  log: {
    info(message: string, fields?: Record<string, unknown>): void;
    error(message: string, fields?: Record<string, unknown>): void;
  };
}
