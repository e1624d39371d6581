import { ConfigError, EnvReader, parseEnv, varsFor, type DaemonApp } from '../src';
import { BUILDERS } from '../src/parse';

const KEY_A = Buffer.alloc(32, 1);
const KEY_B = Buffer.alloc(32, 2);
const DB = 'postgres://sluice:pw@db:5432/sluice';
const JWT = 'x'.repeat(40);
const EXECUTOR = { EXECUTOR_API_URL: 'http://sluice-internal:8081/', EXECUTOR_API_TOKEN: 'shared-token' };

/** The ConfigError thrown by `run`, or a failure when it does not throw one. */
function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseEnv defaults', () => {
  it('gives a standalone server the documented defaults', () => {
    const config = parseEnv('server', { HOSTNAME: 'host-1' }, { standalone: true });
    expect(config).toEqual({
      logLevel: 'info',
      httpServerAddr: '0.0.0.0:8080',
      internalHttpServerAddr: '0.0.0.0:8081',
      dataDir: './.sluice',
      instanceId: 'host-1',
      databaseUrl: undefined,
      databasePreparedStatements: true,
      masterKeys: [],
      authJwtSecret: undefined,
      executorApiToken: undefined,
      apiUrl: 'http://127.0.0.1:8081',
      scheduling: {
        schedulerInterval: 10_000,
        maxConcurrentJobs: 100,
        watchdogInterval: 10_000,
        heartbeatTimeout: 30_000,
        defaultMaxAttempts: 3,
        executorSilenceTimeout: 60_000,
        retention: 30 * 86_400_000,
      },
      instance: {
        executors: 'auto',
        pools: ['default'],
        queuePollInterval: 1000,
        runnerImage: 'sluice:latest',
        registrationInterval: 15_000,
        standbyRunners: 1,
        // As root (the default host here), process tasks run as nobody; otherwise as this user.
        processTaskUser: process.getuid?.() === 0 ? expect.objectContaining({ name: 'nobody' }) : null,
        runtimeDefaults: {},
        workerSlots: 8,
      },
      docker: {
        heartbeatInterval: 5000,
        maxSyncDuration: 0,
        network: 'bridge',
        cleanupInterval: 60_000,
        jobWorkerInterval: 1000,
      },
      k8s: {
        namespace: 'default',
        serverAddr: 'http://127.0.0.1:8081',
        jobWorkerInterval: 1000,
        cleanupInterval: 60_000,
        podPendingTimeout: 600_000,
        defaultCpu: '500m',
        defaultMemory: '512Mi',
        maxJobs: 50,
      },
    });
  });

  it('gives a docker-executor 5 slots, a 5s heartbeat and the executor API as the runners’ URL', () => {
    const config = parseEnv('docker-executor', { ...EXECUTOR, DOCKER_EXECUTOR_OWNER_ID: 'host-a' });
    expect(config.docker).toMatchObject({ ownerId: 'host-a', maxConcurrentJobs: 5, heartbeatInterval: 5000 });
    expect(config.executorApiUrl).toBe('http://sluice-internal:8081');
    expect(config.apiUrl).toBe('http://sluice-internal:8081');
  });

  it('lets the executor poll intervals default to SLUICE_QUEUE_POLL_INTERVAL and override it', () => {
    const config = parseEnv(
      'server',
      { SLUICE_QUEUE_POLL_INTERVAL: '250ms', K8S_EXECUTOR_JOB_WORKER_INTERVAL: '2s' },
      { standalone: true },
    );
    expect(config.docker.jobWorkerInterval).toBe(250);
    expect(config.k8s.jobWorkerInterval).toBe(2000);
  });

  it('reads durations in every unit and bare seconds', () => {
    const config = parseEnv('jobs', {
      DB_DSN: DB,
      PIPELINE_HEARTBEAT_TIMEOUT: '45',
      PIPELINE_JOB_WATCHDOG_INTERVAL: '1500ms',
    });
    expect(config.scheduling.heartbeatTimeout).toBe(45_000);
    expect(config.scheduling.watchdogInterval).toBe(1500);
  });

  it('points runners at the internal host when it is not a wildcard', () => {
    expect(
      parseEnv('server', { INTERNAL_HTTP_SERVER_ADDR: '10.0.0.5:9091' }, { standalone: true }).apiUrl,
    ).toBe('http://10.0.0.5:9091');
    expect(parseEnv('server', { INTERNAL_HTTP_SERVER_ADDR: '[::]:9091' }, { standalone: true }).apiUrl).toBe(
      'http://127.0.0.1:9091',
    );
  });

  it('treats an empty value as unset', () => {
    const config = parseEnv('server', { LOG_LEVEL: '', SLUICE_POOLS: '  ' }, { standalone: true });
    expect(config.logLevel).toBe('info');
    expect(config.instance.pools).toEqual(['default']);
  });
});

describe('SLUICE_DATABASE_PREPARED_STATEMENTS', () => {
  it('turns named statements off for server and jobs, and names the variable on a bad value', () => {
    expect(parseEnv('jobs', { DB_DSN: DB }).databasePreparedStatements).toBe(true);
    expect(
      parseEnv('jobs', { DB_DSN: DB, SLUICE_DATABASE_PREPARED_STATEMENTS: 'false' })
        .databasePreparedStatements,
    ).toBe(false);
    expect(
      parseEnv('server', { SLUICE_DATABASE_PREPARED_STATEMENTS: 'off' }, { standalone: true })
        .databasePreparedStatements,
    ).toBe(false);
    const error = configError(() =>
      parseEnv('jobs', { DB_DSN: DB, SLUICE_DATABASE_PREPARED_STATEMENTS: 'sometimes' }),
    );
    expect(error.message).toContain('SLUICE_DATABASE_PREPARED_STATEMENTS');
  });
});

describe('aliases', () => {
  it('accepts DB_DSN for SLUICE_DATABASE_URL and the canonical name alone', () => {
    expect(parseEnv('jobs', { DB_DSN: DB }).databaseUrl).toBe(DB);
    expect(parseEnv('jobs', { SLUICE_DATABASE_URL: DB }).databaseUrl).toBe(DB);
    expect(parseEnv('jobs', { SLUICE_DATABASE_URL: DB, DB_DSN: DB }).databaseUrl).toBe(DB);
  });

  it('refuses both database names set to different values, naming both and hiding them', () => {
    const other = 'postgres://other:secretpw@db2/sluice';
    const error = configError(() => parseEnv('jobs', { SLUICE_DATABASE_URL: DB, DB_DSN: other }));
    expect(error.message).toContain('SLUICE_DATABASE_URL and DB_DSN');
    expect(error.message).not.toContain('secretpw');
    expect(error.message).not.toContain(':pw@');
  });

  it('names the alias when the value came from it', () => {
    const error = configError(() => parseEnv('jobs', { DB_DSN: 'mysql://x' }));
    expect(error.problems).toEqual([
      expect.objectContaining({
        variable: 'DB_DSN (alias of SLUICE_DATABASE_URL)',
        received: '(set, hidden)',
      }),
    ]);
  });

  it('maps SECRET_ENCRYPTION_KEY and _PREVIOUS to [key, previous]', () => {
    const env = {
      SECRET_ENCRYPTION_KEY: KEY_A.toString('base64'),
      SECRET_ENCRYPTION_KEY_PREVIOUS: KEY_B.toString('hex'),
    };
    expect(parseEnv('server', env, { standalone: true }).masterKeys).toEqual([KEY_A, KEY_B]);
  });

  it('reads SLUICE_MASTER_KEYS as a list, first key first', () => {
    const env = { SLUICE_MASTER_KEYS: `${KEY_B.toString('base64')}, ${KEY_A.toString('hex')}` };
    expect(parseEnv('server', env, { standalone: true }).masterKeys).toEqual([KEY_B, KEY_A]);
  });

  it('accepts both key spellings when they hold the same keys, refuses them when not', () => {
    const same = {
      SLUICE_MASTER_KEYS: KEY_A.toString('hex'),
      SECRET_ENCRYPTION_KEY: KEY_A.toString('base64'),
    };
    expect(parseEnv('server', same, { standalone: true }).masterKeys).toEqual([KEY_A]);
    const different = {
      SLUICE_MASTER_KEYS: KEY_A.toString('hex'),
      SECRET_ENCRYPTION_KEY: KEY_B.toString('hex'),
    };
    const error = configError(() => parseEnv('server', different, { standalone: true }));
    expect(error.message).toContain('SLUICE_MASTER_KEYS and SECRET_ENCRYPTION_KEY');
    expect(error.message).not.toContain(KEY_B.toString('hex'));
  });

  it('refuses a previous key without a current one', () => {
    const error = configError(() =>
      parseEnv('server', { SECRET_ENCRYPTION_KEY_PREVIOUS: KEY_B.toString('hex') }, { standalone: true }),
    );
    expect(error.problems.map((p) => p.variable)).toEqual(['SECRET_ENCRYPTION_KEY_PREVIOUS']);
  });
});

describe('errors', () => {
  it('lists every bad variable with what was wrong and what was received', () => {
    const error = configError(() =>
      parseEnv('jobs', {
        DB_DSN: DB,
        SLUICE_RETENTION: 'a month',
        PIPELINE_DEFAULT_MAX_ATTEMPTS: '0',
        LOG_LEVEL: 'loud',
      }),
    );
    expect(error.problems.map((p) => p.variable)).toEqual([
      'LOG_LEVEL',
      'PIPELINE_DEFAULT_MAX_ATTEMPTS',
      'SLUICE_RETENTION',
    ]);
    expect(error.message).toContain('SLUICE_RETENTION: expected a duration');
    expect(error.message).toContain('received "a month"');
    expect(error.message).toContain(
      'PIPELINE_DEFAULT_MAX_ATTEMPTS: expected a whole number ≥ 1, received "0"',
    );
  });

  it('never prints a secret value', () => {
    const shortSecret = 'hunter2-short';
    const error = configError(() =>
      parseEnv(
        'server',
        { AUTH_JWT_SECRET: shortSecret, SLUICE_MASTER_KEYS: 'tooshortkey' },
        { standalone: true },
      ),
    );
    expect(error.message).toContain(
      'AUTH_JWT_SECRET: must be at least 32 characters long, received (set, hidden)',
    );
    expect(error.message).toContain('SLUICE_MASTER_KEYS');
    expect(error.message).not.toContain(shortSecret);
    expect(error.message).not.toContain('tooshortkey');
  });

  it('names every missing variable a non-standalone server needs', () => {
    const error = configError(() => parseEnv('server', {}));
    expect(error.problems.map((p) => p.variable)).toEqual([
      'SLUICE_MASTER_KEYS (or SECRET_ENCRYPTION_KEY)',
      'SLUICE_DATABASE_URL or DB_DSN',
      'AUTH_JWT_SECRET',
    ]);
    expect(
      parseEnv('server', { DB_DSN: DB, AUTH_JWT_SECRET: JWT, SLUICE_MASTER_KEYS: KEY_A.toString('hex') })
        .databaseUrl,
    ).toBe(DB);
  });

  it('names the missing database of sluice jobs', () => {
    const error = configError(() => parseEnv('jobs', {}));
    expect(error.message).toMatch(/SLUICE_DATABASE_URL or DB_DSN: is required \(.*\) but not set/);
  });

  // The owner ID is required where the docker executor runs, which only the instance builder knows
  // (@sluice/executor-runtime's buildInstance refuses it there); SLUICE_EXECUTORS=process needs none.
  it('reads a docker-executor without owner ID, even when set empty, with SLUICE_INSTANCE_ID or the hostname as its ID', () => {
    const config = parseEnv('docker-executor', {
      ...EXECUTOR,
      DOCKER_EXECUTOR_OWNER_ID: '',
      HOSTNAME: 'host-9',
    });
    expect(config.docker.ownerId).toBeUndefined();
    expect(config.instanceId).toBe('host-9');
    expect(parseEnv('docker-executor', { ...EXECUTOR, SLUICE_INSTANCE_ID: 'exec-a' }).instanceId).toBe(
      'exec-a',
    );
  });

  it('refuses an owner ID that cannot be a label value', () => {
    const error = configError(() =>
      parseEnv('docker-executor', { ...EXECUTOR, DOCKER_EXECUTOR_OWNER_ID: 'my host' }),
    );
    expect(error.problems[0]).toMatchObject({ variable: 'DOCKER_EXECUTOR_OWNER_ID', received: '"my host"' });
  });
});

describe('kubernetes owner ID', () => {
  const base = { ...EXECUTOR };

  it('takes K8S_EXECUTOR_OWNER_ID as it is', () => {
    expect(parseEnv('k8s-executor', { ...base, K8S_EXECUTOR_OWNER_ID: 'blue' }).k8s.ownerId).toBe('blue');
  });

  it('appends the StatefulSet ordinal of the hostname to the prefix', () => {
    const env = { ...base, K8S_EXECUTOR_OWNER_ID_PREFIX: 'blue', HOSTNAME: 'sluice-k8s-executor-2' };
    const config = parseEnv('k8s-executor', env);
    expect(config.k8s.ownerId).toBe('blue-2');
    expect(config.k8s.serverAddr).toBe('http://sluice-internal:8081');
  });

  it('refuses a prefix when the hostname has no ordinal, naming the prefix and the hostname', () => {
    const error = configError(() =>
      parseEnv('k8s-executor', { ...base, K8S_EXECUTOR_OWNER_ID_PREFIX: 'blue', HOSTNAME: 'laptop' }),
    );
    expect(error.problems[0]?.variable).toBe('K8S_EXECUTOR_OWNER_ID_PREFIX');
    expect(error.message).toContain('"laptop"');
  });

  it('reads K8S_EXECUTOR_POD_PENDING_TIMEOUT as a duration and refuses one that is not', () => {
    const env = { ...base, K8S_EXECUTOR_OWNER_ID: 'blue' };
    expect(
      parseEnv('k8s-executor', { ...env, K8S_EXECUTOR_POD_PENDING_TIMEOUT: '90s' }).k8s.podPendingTimeout,
    ).toBe(90_000);
    const error = configError(() =>
      parseEnv('k8s-executor', { ...env, K8S_EXECUTOR_POD_PENDING_TIMEOUT: 'soon' }),
    );
    expect(error.problems[0]?.variable).toBe('K8S_EXECUTOR_POD_PENDING_TIMEOUT');
  });

  it('refuses both or neither', () => {
    const both = configError(() =>
      parseEnv('k8s-executor', {
        ...base,
        K8S_EXECUTOR_OWNER_ID: 'a',
        K8S_EXECUTOR_OWNER_ID_PREFIX: 'b',
        HOSTNAME: 'x-0',
      }),
    );
    expect(both.problems[0]?.variable).toBe('K8S_EXECUTOR_OWNER_ID and K8S_EXECUTOR_OWNER_ID_PREFIX');
    const neither = configError(() => parseEnv('k8s-executor', base));
    expect(neither.problems[0]?.variable).toBe('K8S_EXECUTOR_OWNER_ID or K8S_EXECUTOR_OWNER_ID_PREFIX');
  });
});

describe('variable metadata', () => {
  it.each(['server', 'jobs', 'docker-executor', 'k8s-executor'] satisfies DaemonApp[])(
    '%s reads exactly the variables whose apps name it',
    (app) => {
      const reader = new EnvReader({});
      BUILDERS[app](reader, {});
      const declared = varsFor(app).map((info) => info.name);
      expect([...reader.names].sort()).toEqual(declared.sort());
    },
  );
});
