import { randomBytes } from 'node:crypto';
import {
  baseEnv,
  EXECUTOR_TOKEN,
  explained,
  SLUICE,
  sleep,
  startApp,
  userApi,
  useTopology,
  type AppProcess,
} from '@sluice/testing';

/**
 * The ID an executor instance registers under: the docker executor's owner ID
 * when it runs it, else SLUICE_INSTANCE_ID (default the hostname). A
 * process-only docker-executor needs no DOCKER_EXECUTOR_OWNER_ID at all.
 */
const HOST = `exec-host-${randomBytes(3).toString('hex')}`;

function startProcessOnly(internalUrl: string, env: Record<string, string>): Promise<AppProcess> {
  return startApp({
    main: SLUICE,
    args: ['docker-executor'],
    env: {
      ...baseEnv(),
      SLUICE_EXECUTORS: 'process',
      EXECUTOR_API_URL: internalUrl,
      EXECUTOR_API_TOKEN: EXECUTOR_TOKEN,
      INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0',
      SLUICE_QUEUE_POLL_INTERVAL: '250ms',
      EXECUTOR_REGISTRATION_INTERVAL: '500ms',
      ...env,
    },
    readyWhen: '"executor instance started"',
  });
}

const topology = useTopology({
  // No DOCKER_EXECUTOR_OWNER_ID; the hostname names it.
  startExecutor: (server) => startProcessOnly(server.internalUrl, { HOSTNAME: HOST }),
});

describe('the ID of a docker-executor without the docker executor', () => {
  it('registers under the hostname, claims and runs under it, with no DOCKER_EXECUTOR_OWNER_ID', async () => {
    const { server, executor } = topology;
    const api = await userApi(server, 'admin');
    const flow = 'tasks:\n  - id: hi\n    type: command\n    command: ["sh", "-c", "echo hi"]\n';
    expect((await api.putFlow('ids', 'hi', flow)).status).toBe(200);
    const id = await api.run('ids', 'hi');
    const done = await explained({ server, executor }, () =>
      api.waitFor(id, (e) => e.taskRuns.some((r) => r.state === 'SUCCEEDED'), 30_000),
    );
    expect(done.taskRuns[0]).toMatchObject({ state: 'SUCCEEDED', ownerId: HOST });
    const listed = (await api.call('GET', '/api/v1/executors')).body.executors as Array<{ id: string }>;
    expect(listed.map((e) => e.id)).toContain(HOST);
  });

  it('registers under SLUICE_INSTANCE_ID when it is set', async () => {
    const { server } = topology;
    const named = `named-${randomBytes(3).toString('hex')}`;
    const other = await startProcessOnly(server.internalUrl, { HOSTNAME: HOST, SLUICE_INSTANCE_ID: named });
    try {
      const api = await userApi(server, 'member');
      await sleep(1_000);
      const listed = (await api.call('GET', '/api/v1/executors')).body.executors as Array<{ id: string }>;
      expect(listed.map((e) => e.id)).toContain(named);
    } finally {
      expect(await other.stop('SIGTERM')).toBe(0);
    }
  });
});
