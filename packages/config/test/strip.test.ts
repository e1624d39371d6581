import { stripControlPlaneEnv } from '../src';

describe('stripControlPlaneEnv', () => {
  it('removes the control plane secrets and WATERMILL_* and reports each', () => {
    const env: Record<string, string | undefined> = {
      PATH: '/usr/bin',
      DB_DSN: 'postgres://x',
      SLUICE_DATABASE_URL: 'postgres://y',
      AUTH_JWT_SECRET: 'j',
      SECRET_ENCRYPTION_KEY: 'k',
      SECRET_ENCRYPTION_KEY_PREVIOUS: 'p',
      SLUICE_MASTER_KEYS: 'm',
      PIPELINE_EXECUTOR_API_TOKEN: 't',
      WATERMILL_PUBSUB: 'sql',
      EXECUTOR_API_TOKEN: 'kept',
      DOCKER_EXECUTOR_OWNER_ID: 'kept-too',
    };
    const { removed } = stripControlPlaneEnv(env);
    expect(removed).toEqual([
      'AUTH_JWT_SECRET',
      'DB_DSN',
      'PIPELINE_EXECUTOR_API_TOKEN',
      'SECRET_ENCRYPTION_KEY',
      'SECRET_ENCRYPTION_KEY_PREVIOUS',
      'SLUICE_DATABASE_URL',
      'SLUICE_MASTER_KEYS',
      'WATERMILL_PUBSUB',
    ]);
    expect(env).toEqual({
      PATH: '/usr/bin',
      EXECUTOR_API_TOKEN: 'kept',
      DOCKER_EXECUTOR_OWNER_ID: 'kept-too',
    });
  });

  it('removes nothing from a clean environment', () => {
    expect(stripControlPlaneEnv({ HOME: '/root' }).removed).toEqual([]);
  });
});
