import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  baseEnv,
  createTestDatabase,
  dockerFixtures,
  ended,
  explained,
  freePort,
  JWT_SECRET,
  MASTER_KEY,
  noContainersLeft,
  removeOwned,
  startApp,
  userApi,
  type DockerFixtures,
  type TestDatabase,
} from '@sluice/testing';

/**
 * `sluice server --standalone` with SLUICE_EXECUTORS=auto on a machine whose
 * Docker engine answers: the embedded instance turns docker on, which needs
 * DOCKER_EXECUTOR_OWNER_ID.
 */

const SERVER_MAIN = join(__dirname, '..', '..', 'server', 'dist', 'main.js');
let fx: DockerFixtures;
let db: TestDatabase;

beforeAll(async () => {
  fx = await dockerFixtures();
  db = await createTestDatabase();
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

async function standaloneEnv(extra: Record<string, string>): Promise<Record<string, string>> {
  const [httpPort, internalPort] = [await freePort(), await freePort()];
  return {
    ...baseEnv(),
    SLUICE_DATABASE_URL: db.url,
    AUTH_JWT_SECRET: JWT_SECRET,
    SLUICE_MASTER_KEYS: MASTER_KEY,
    HTTP_SERVER_ADDR: `127.0.0.1:${httpPort}`,
    INTERNAL_HTTP_SERVER_ADDR: `127.0.0.1:${internalPort}`,
    SLUICE_INSTANCE_ID: `standalone-${randomBytes(3).toString('hex')}`,
    SLUICE_QUEUE_POLL_INTERVAL: '250ms',
    DOCKER_HOST: process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock',
    LOG_LEVEL: 'debug',
    ...extra,
  };
}

describe('standalone server with the docker executor', () => {
  it('does not start without DOCKER_EXECUTOR_OWNER_ID when docker is detected, and names it', async () => {
    const app = await startApp({
      main: SERVER_MAIN,
      args: ['server', '--standalone'],
      env: await standaloneEnv({}),
    });
    const code = await app.exited;
    expect(code).not.toBe(0);
    expect(app.output()).toContain('DOCKER_EXECUTOR_OWNER_ID');
  }, 60_000);

  it('runs docker and process tasks of one flow with SLUICE_EXECUTORS=auto', async () => {
    const owner = `standalone-${randomBytes(3).toString('hex')}`;
    const env = await standaloneEnv({
      DOCKER_EXECUTOR_OWNER_ID: owner,
      DOCKER_EXECUTOR_NETWORK: 'host',
      SLUICE_RUNNER_IMAGE: fx.runner,
      SLUICE_WORKER_SLOTS: '2',
    });
    const server = await startApp({
      main: SERVER_MAIN,
      args: ['server', '--standalone'],
      env,
      readyWhen: '"server started"',
    });
    try {
      const api = await userApi({ publicUrl: `http://${env.HTTP_SERVER_ADDR}` }, 'admin');
      const flow = [
        'tasks:',
        '  - id: in_docker',
        '    type: command',
        `    executor: { type: docker, image: "${fx.busybox}" }`,
        '    command: ["sh", "-c", "echo from-docker; echo n=1 >> \\"$SLUICE_OUTPUTS\\""]',
        '  - id: on_host',
        '    type: command',
        '    command: ["sh", "-c", "echo from-process"]',
        '',
      ].join('\n');
      expect((await api.putFlow('solo', 'mixed', flow)).status).toBe(200);
      const id = await api.run('solo', 'mixed');
      const done = await explained({ server }, () => api.waitFor(id, ended, 90_000));
      expect(done.state).toBe('SUCCEEDED');
      const docker = done.taskRuns.find((r) => r.taskId === 'in_docker')!;
      expect(docker.executor.type).toBe('docker');
      expect(docker.outputs).toEqual({ n: '1' });
      expect(done.taskRuns.find((r) => r.taskId === 'on_host')!.executor.type).toBe('process');
      // The owner ID is also the instance's ID: its task runs and the executor list name it, not SLUICE_INSTANCE_ID.
      expect(done.taskRuns.map((r) => r.ownerId)).toEqual([owner, owner]);
      const listed = (await api.call('GET', '/api/v1/executors')).body.executors as Array<{ id: string }>;
      expect(listed.map((e) => e.id)).toContain(owner);
      expect(listed.map((e) => e.id)).not.toContain(env.SLUICE_INSTANCE_ID);
      expect(await noContainersLeft(fx.docker, owner)).toEqual([]);
    } finally {
      await server.stop();
      await removeOwned(fx.docker, owner);
    }
  }, 120_000);
});
