import { join } from 'node:path';
import { baseEnv, startApp } from '@sluice/testing';

/** The built app itself, started as its image starts it (no bin/sluice.cjs in front). */
const executorMain = join(__dirname, '..', 'dist', 'main.js');

describe('the built sluice docker-executor', () => {
  // issue 11: only an instance that runs the docker executor needs DOCKER_EXECUTOR_OWNER_ID.
  it('exits non-zero without DOCKER_EXECUTOR_OWNER_ID when docker is listed, naming it', async () => {
    const app = await startApp({
      main: executorMain,
      args: ['docker-executor'],
      env: {
        ...baseEnv(),
        SLUICE_EXECUTORS: 'process,docker',
        EXECUTOR_API_URL: 'http://127.0.0.1:9',
        EXECUTOR_API_TOKEN: 'token',
      },
    });
    expect(await app.exited).toBe(2);
    expect(app.output()).toContain('DOCKER_EXECUTOR_OWNER_ID: is required');
  });

  it('starts with no command as the image does, and prints its usage for --help', async () => {
    const app = await startApp({ main: executorMain, args: ['--help'], env: baseEnv() });
    expect(await app.exited).toBe(0);
    expect(app.output()).toContain('Usage: sluice docker-executor');
  });
});
