import { captureOutput } from '@sluice/testing';
import { main } from '../src/main';

/** main() in this process, its terminal in memory. */
const io = captureOutput;

const EXECUTOR = {
  EXECUTOR_API_URL: 'http://127.0.0.1:9',
  EXECUTOR_API_TOKEN: 'shared-token',
  INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0',
  // No Docker here, whatever the host has: auto detection pings this socket.
  DOCKER_HOST: 'unix:///nonexistent/docker.sock',
};

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

  it('refuses SLUICE_EXECUTORS=auto when no Docker API answers, and says what to do', async () => {
    const run = io({ ...EXECUTOR, DOCKER_EXECUTOR_OWNER_ID: 'host-a' });
    expect(await main(['docker-executor'], run.io)).toBe(2);
    expect(run.err()).toContain('SLUICE_EXECUTORS: is auto, but no Docker API answered a ping within 2 s');
    expect(run.err()).toContain('SLUICE_EXECUTORS=process for a process-only instance');
  });

  // issue 11: a listed docker executor is on whether or not its engine answers (docker-engine-down.test.ts
  // shows it claiming nothing meanwhile); what it cannot do without is its owner ID.
  it('refuses a listed docker executor without DOCKER_EXECUTOR_OWNER_ID before asking Docker, naming it', async () => {
    const run = io({ ...EXECUTOR, SLUICE_EXECUTORS: 'process,docker' });
    expect(await main(['docker-executor'], run.io)).toBe(2);
    expect(run.err()).toContain('DOCKER_EXECUTOR_OWNER_ID: is required');
    expect(run.err()).not.toContain('ping');
  });

  it('drops the control plane secrets before anything else, warning once for each', async () => {
    const env: NodeJS.ProcessEnv = {
      ...EXECUTOR,
      DOCKER_EXECUTOR_OWNER_ID: 'host-a',
      DB_DSN: 'postgres://u:p@db/sluice',
      AUTH_JWT_SECRET: 'x'.repeat(40),
    };
    const run = io(env);
    expect(await main(['docker-executor'], run.io)).toBe(2); // auto: see above
    expect(env.DB_DSN).toBeUndefined();
    expect(env.AUTH_JWT_SECRET).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    const warnings = run
      .out()
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { level: string; variable?: string })
      .filter((line) => line.level === 'warn');
    expect(warnings.map((w) => w.variable)).toEqual(['AUTH_JWT_SECRET', 'DB_DSN']);
  });

  it('runs the runner for `exec`, which refuses to start without its variables', async () => {
    const run = io({});
    expect(await main(['exec'], run.io)).toBe(2);
    expect(run.err()).toContain('sluice exec:');
    expect(run.err()).toContain('SLUICE_RUN_TOKEN');
  });
});
