import { defineVar, type AppName } from '../define';
import { masterKey, masterKeyList } from '../keys';
import { bool, hostPort, httpUrl, oneOf, postgresUrl, text } from '../schemas';

/** The long-running processes; each serves probes and metrics on the internal port. */
export const DAEMONS: readonly AppName[] = ['server', 'jobs', 'docker-executor', 'k8s-executor'];

export const LOG_LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOG_LEVEL = defineVar({
  name: 'LOG_LEVEL',
  schema: oneOf(LOG_LEVELS),
  default: 'info',
  description: 'Least severe level written to the JSON log: error, warn, info, http, verbose or debug.',
  apps: DAEMONS,
});

export const HTTP_SERVER_ADDR = defineVar({
  name: 'HTTP_SERVER_ADDR',
  schema: hostPort(),
  default: '0.0.0.0:8080',
  description: 'Listen address of the public API and UI.',
  apps: ['server'],
});

export const INTERNAL_HTTP_SERVER_ADDR = defineVar({
  name: 'INTERNAL_HTTP_SERVER_ADDR',
  schema: hostPort(),
  default: '0.0.0.0:8081',
  description:
    'Listen address of the internal API: /live, /ready and /metrics everywhere; the executor and runner APIs on servers. Keep it off the public network.',
  apps: DAEMONS,
});

export const SLUICE_DATA_DIR = defineVar({
  name: 'SLUICE_DATA_DIR',
  schema: text(),
  default: './.sluice',
  description:
    'Where a standalone server keeps its embedded PostgreSQL and generated secrets when no database URL or keys are set.',
  apps: ['server'],
});

export const SLUICE_INSTANCE_ID = defineVar({
  name: 'SLUICE_INSTANCE_ID',
  schema: text(),
  description:
    "ID under which an instance that runs no docker executor registers (a standalone server's embedded instance, a docker-executor with SLUICE_EXECUTORS=process); one that runs it registers under DOCKER_EXECUTOR_OWNER_ID. Default: the hostname.",
  apps: ['server', 'docker-executor'],
});

export const SLUICE_DATABASE_URL = defineVar({
  name: 'SLUICE_DATABASE_URL',
  aliases: ['DB_DSN'],
  schema: postgresUrl(),
  secret: true,
  description:
    'PostgreSQL URL (postgres://user:password@host:5432/db). Required by `sluice server` and `sluice jobs`; a standalone server without it runs an embedded PostgreSQL under SLUICE_DATA_DIR.',
  apps: ['server', 'jobs'],
});

export const SLUICE_DATABASE_PREPARED_STATEMENTS = defineVar({
  name: 'SLUICE_DATABASE_PREPARED_STATEMENTS',
  schema: bool(),
  default: 'true',
  description:
    'Send the claim and completion as named prepared statements (parsed and planned once per connection). Set to false behind a pooler in transaction mode that cannot keep them (PgBouncer before 1.21, or without max_prepared_statements).',
  apps: ['server', 'jobs'],
});

export const SLUICE_MASTER_KEYS = defineVar({
  name: 'SLUICE_MASTER_KEYS',
  schema: masterKeyList(),
  secret: true,
  description:
    'Comma list of 32-byte keys (base64 or 64 hex characters) that encrypt stored secrets: the first encrypts, all decrypt, so a new key goes first to rotate. Required by `sluice server`; a standalone server generates one under SLUICE_DATA_DIR.',
  apps: ['server'],
});

export const SECRET_ENCRYPTION_KEY = defineVar({
  name: 'SECRET_ENCRYPTION_KEY',
  schema: masterKey(),
  secret: true,
  aliasOf: 'SLUICE_MASTER_KEYS',
  description: 'Alternative to SLUICE_MASTER_KEYS: the key that encrypts (32 bytes, base64 or hex).',
  apps: ['server'],
});

export const SECRET_ENCRYPTION_KEY_PREVIOUS = defineVar({
  name: 'SECRET_ENCRYPTION_KEY_PREVIOUS',
  schema: masterKey(),
  secret: true,
  aliasOf: 'SLUICE_MASTER_KEYS',
  description:
    'With SECRET_ENCRYPTION_KEY: an older key that still decrypts (SLUICE_MASTER_KEYS=<key>,<previous>).',
  apps: ['server'],
});

export const AUTH_JWT_SECRET = defineVar({
  name: 'AUTH_JWT_SECRET',
  schema: text({ minLength: 32 }),
  secret: true,
  description:
    'Signs user and run tokens (at least 32 characters; `openssl rand -base64 32`). Required by `sluice server`; a standalone server generates one under SLUICE_DATA_DIR.',
  apps: ['server'],
});

export const PIPELINE_EXECUTOR_API_TOKEN = defineVar({
  name: 'PIPELINE_EXECUTOR_API_TOKEN',
  schema: text(),
  secret: true,
  description:
    'Shared secret that executors send in X-Internal-Secret. While it is unset or empty the executor API refuses every call.',
  apps: ['server'],
});

export const SLUICE_API_URL = defineVar({
  name: 'SLUICE_API_URL',
  schema: httpUrl(),
  description:
    'Internal API URL that runners of process and docker tasks call. Default: http://127.0.0.1:<internal port> on a server, EXECUTOR_API_URL on a docker-executor. The runner receives it from its executor.',
  apps: ['server', 'docker-executor', 'runner'],
});

export const SLUICE_RUN_TOKEN = defineVar({
  name: 'SLUICE_RUN_TOKEN',
  schema: text(),
  secret: true,
  description: 'Set by the executor for the runner only: the per-task-run token for the runner API.',
  apps: ['runner'],
});

export const SLUICE_TASK_RUN_ID = defineVar({
  name: 'SLUICE_TASK_RUN_ID',
  schema: text(),
  description: 'Set by the executor for the runner only: the task run it runs.',
  apps: ['runner'],
});
