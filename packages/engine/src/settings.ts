import type { RunnerLimits } from '@sluice/protocol';
import type { SecretKeyring } from '@sluice/secrets';
import type { Store } from '@sluice/store';

/** Engine knobs, from the app's configuration (names of the variables in comments). */
export interface EngineSettings {
  /** AUTH_JWT_SECRET: signs run tokens. Empty in `sluice jobs`, which mints none. */
  jwtSecret: string;
  /** PIPELINE_DEFAULT_MAX_ATTEMPTS: attempts when neither task nor flow sets retry.max_attempts. */
  defaultMaxAttempts: number;
  /** Base delay between attempts when the flow sets no retry.backoff. */
  defaultRetryBackoffMs: number;
  /** Per task run when neither task nor flow sets timeout. */
  defaultTimeoutMs: number;
  /** How often the runner heartbeats (docs/decisions.md §6: 10 s). */
  runnerHeartbeatIntervalMs: number;
  /** SIGTERM → SIGKILL grace on cancel (10 s). */
  cancelGraceMs: number;
  runnerLimits: RunnerLimits;
}

export const DEFAULT_ENGINE_SETTINGS: Omit<EngineSettings, 'jwtSecret'> = {
  defaultMaxAttempts: 1,
  defaultRetryBackoffMs: 10_000,
  defaultTimeoutMs: 60 * 60 * 1000,
  runnerHeartbeatIntervalMs: 10_000,
  cancelGraceMs: 10_000,
  runnerLimits: {
    artifactMaxBytes: 10 * 1024 * 1024,
    artifactsTotalMaxBytes: 50 * 1024 * 1024,
    outputValueMaxBytes: 64 * 1024,
    logLineMaxBytes: 16 * 1024,
  },
};

export interface EngineLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface EngineDeps {
  /** The database: every read and write goes through @sluice/store's functions on it. */
  store: Store;
  /** Decrypts secrets for the runner API; absent in `sluice jobs`, which resolves none. */
  keyring?: SecretKeyring;
  settings: EngineSettings;
  log: EngineLog;
  /** Called after a commit that queued task runs (in-process wake-up of local instances). */
  onQueued?: () => void;
  /** Called with every secret value the runner API resolves, so the process's logger can redact it. */
  onSecretResolved?: (value: string) => void;
}
