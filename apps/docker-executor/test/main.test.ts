import { PassThrough } from 'node:stream';
import { main } from '../src/main';

function io(env: NodeJS.ProcessEnv = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString()));
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString()));
  return { io: { env, stdout, stderr }, out: () => out.join(''), err: () => err.join('') };
}

const EXECUTOR = { EXECUTOR_API_URL: 'http://sluice-internal:8081', EXECUTOR_API_TOKEN: 'shared-token' };

describe('sluice docker-executor', () => {
  it('prints usage and the variables it reads for --help', async () => {
    const run = io();
    expect(await main(['docker-executor', '--help'], run.io)).toBe(0);
    expect(run.out()).toContain('Usage: sluice docker-executor');
    expect(run.out()).toContain('DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS [default: 5]');
    expect(run.out()).not.toContain('SLUICE_DATABASE_URL');
  });

  it('refuses to start without DOCKER_EXECUTOR_OWNER_ID, naming it', async () => {
    const run = io({ ...EXECUTOR });
    expect(await main(['docker-executor'], run.io)).toBe(2);
    expect(run.err()).toContain('DOCKER_EXECUTOR_OWNER_ID: is required');
  });

  it('drops the control plane secrets from its environment and warns for each', async () => {
    const env: NodeJS.ProcessEnv = {
      ...EXECUTOR,
      DOCKER_EXECUTOR_OWNER_ID: 'host-a',
      DB_DSN: 'postgres://u:p@db/sluice',
      AUTH_JWT_SECRET: 'x'.repeat(40),
    };
    const run = io(env);
    expect(await main(['docker-executor'], run.io)).toBe(2);
    expect(env.DB_DSN).toBeUndefined();
    expect(env.AUTH_JWT_SECRET).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    const warnings = run
      .out()
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { level: string; variable: string });
    expect(warnings.map((w) => [w.level, w.variable])).toEqual([
      ['warn', 'AUTH_JWT_SECRET'],
      ['warn', 'DB_DSN'],
    ]);
    expect(run.err()).toContain('docker executor issue');
  });
});
