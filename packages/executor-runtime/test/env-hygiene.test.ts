import { forgetControlPlaneEnv } from '../src/env-hygiene';

describe('forgetControlPlaneEnv', () => {
  it('deletes every control-plane variable and warns once for each, by name and never by value', () => {
    const env: NodeJS.ProcessEnv = {
      PATH: '/usr/bin',
      EXECUTOR_API_TOKEN: 'executor-token',
      DB_DSN: 'postgres://u:hunter2@db/sluice',
      SLUICE_DATABASE_URL: 'postgres://u:hunter2@db/sluice',
      AUTH_JWT_SECRET: 'jwt-secret-value-123456789012345678',
      SECRET_ENCRYPTION_KEY: 'key-one',
      SECRET_ENCRYPTION_KEY_PREVIOUS: 'key-zero',
      SLUICE_MASTER_KEYS: 'key-one,key-zero',
      PIPELINE_EXECUTOR_API_TOKEN: 'server-token',
      WATERMILL_FOO: 'bar-value',
      WATERMILL_PUBSUB: 'pg-value',
    };
    const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const removed = forgetControlPlaneEnv(env, {
      warn: (message, fields) => warnings.push({ message, fields }),
    });

    const dropped = [
      'AUTH_JWT_SECRET',
      'DB_DSN',
      'PIPELINE_EXECUTOR_API_TOKEN',
      'SECRET_ENCRYPTION_KEY',
      'SECRET_ENCRYPTION_KEY_PREVIOUS',
      'SLUICE_DATABASE_URL',
      'SLUICE_MASTER_KEYS',
      'WATERMILL_FOO',
      'WATERMILL_PUBSUB',
    ];
    expect(removed).toEqual(dropped);
    expect(Object.keys(env).sort()).toEqual(['EXECUTOR_API_TOKEN', 'PATH']);
    expect(warnings.map((w) => w.fields?.variable)).toEqual(dropped);
    const text = JSON.stringify(warnings);
    for (const value of ['hunter2', 'jwt-secret-value', 'key-one', 'server-token', 'bar-value', 'pg-value']) {
      expect(text).not.toContain(value);
    }
  });

  it('warns about nothing when nothing is there', () => {
    const warn = jest.fn();
    expect(forgetControlPlaneEnv({ PATH: '/usr/bin' }, { warn })).toEqual([]);
    expect(warn).not.toHaveBeenCalled();
  });
});
