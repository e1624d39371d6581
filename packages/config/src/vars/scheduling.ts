import { defineVar } from '../define';
import { duration, int } from '../schemas';

/** Background jobs: in `sluice jobs`, or inside a standalone server. */
const BACKGROUND = ['server', 'jobs'] as const;

export const PIPELINE_JOB_SCHEDULER_INTERVAL = defineVar({
  name: 'PIPELINE_JOB_SCHEDULER_INTERVAL',
  schema: duration(),
  default: '10s',
  description: 'How often the scheduler starts due executions of scheduled flows (default chosen by Sluice).',
  apps: BACKGROUND,
});

export const PIPELINE_MAX_CONCURRENT_JOBS = defineVar({
  name: 'PIPELINE_MAX_CONCURRENT_JOBS',
  schema: int({ min: 0 }),
  default: '100',
  description:
    'The scheduler starts no scheduled execution while this many task runs are queued, starting or running; 0 means no limit (default chosen by Sluice).',
  apps: BACKGROUND,
});

export const PIPELINE_JOB_WATCHDOG_INTERVAL = defineVar({
  name: 'PIPELINE_JOB_WATCHDOG_INTERVAL',
  schema: duration(),
  default: '10s',
  description:
    'How often the watchdog fails task runs whose heartbeat is too old (default chosen by Sluice).',
  apps: BACKGROUND,
});

export const PIPELINE_HEARTBEAT_TIMEOUT = defineVar({
  name: 'PIPELINE_HEARTBEAT_TIMEOUT',
  schema: duration(),
  default: '30s',
  description:
    'A starting or running task run whose last heartbeat is older than this fails with reason `lost`.',
  apps: BACKGROUND,
});

export const PIPELINE_DEFAULT_MAX_ATTEMPTS = defineVar({
  name: 'PIPELINE_DEFAULT_MAX_ATTEMPTS',
  schema: int({ min: 1 }),
  default: '3',
  description:
    'Attempts of a task when neither the task nor its flow sets retry.max_attempts; 1 means no retry (default chosen by Sluice).',
  apps: BACKGROUND,
});

export const PIPELINE_EXECUTOR_SILENCE_TIMEOUT = defineVar({
  name: 'PIPELINE_EXECUTOR_SILENCE_TIMEOUT',
  schema: duration(),
  default: '60s',
  description:
    'An instance that has not registered for this long drops off the executor list and no longer counts as serving its pools.',
  apps: BACKGROUND,
});

export const SLUICE_RETENTION = defineVar({
  name: 'SLUICE_RETENTION',
  schema: duration({ allowZero: true }),
  default: '30d',
  description:
    'The logs, outputs, metrics and artifacts of finished executions are deleted after this long (the executions and task runs stay listed); 0 keeps them forever (default chosen by Sluice).',
  apps: BACKGROUND,
});
