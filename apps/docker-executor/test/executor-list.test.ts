import { explained, sleep, startExecutor, userApi, useTopology } from '@sluice/testing';

const topology = useTopology({
  serverEnv: { PIPELINE_EXECUTOR_SILENCE_TIMEOUT: '2s' },
  startExecutor: (server) =>
    startExecutor(server, 'listed-host', {
      EXECUTOR_REGISTRATION_INTERVAL: '500ms',
      DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS: '3',
      SLUICE_VERSION: '9.9.9-e2e',
    }),
});

interface Listed {
  id: string;
  type: string;
  version: string;
  capacity: Record<string, number | null>;
  lastSeenAt: string;
}

describe('ListExecutors', () => {
  it('shows a registered instance to any member and drops it after the silence timeout, keeping its row', async () => {
    const { server, executor } = topology;
    const member = await userApi(server, 'member');
    const list = async () =>
      ((await member.call('GET', '/api/v1/executors')).body.executors as Listed[]) ?? [];

    // Still listed after several silence timeouts' worth of time: it keeps re-registering.
    await sleep(2500);
    const listed = await explained({ server, executor }, async () => {
      const found = (await list()).find((e) => e.id === 'listed-host');
      if (!found) throw new Error(`listed-host is not listed: ${JSON.stringify(await list())}`);
      return found;
    });
    expect(listed).toMatchObject({
      type: 'docker-executor',
      version: '9.9.9-e2e',
      capacity: { process: 3, inline: 64 },
    });

    expect(await executor.stop('SIGTERM')).toBe(0);
    const deadline = Date.now() + 15_000;
    while ((await list()).some((e) => e.id === 'listed-host')) {
      if (Date.now() > deadline) throw new Error('the stopped instance is still listed');
      await sleep(250);
    }

    const admin = await userApi(server, 'admin');
    const instances = (await admin.call('GET', '/api/v1/instances')).body.instances as Array<
      Record<string, unknown>
    >;
    expect(instances.find((i) => i.id === 'listed-host')).toMatchObject({
      type: 'docker-executor',
      pools: ['default'],
      executors: ['inline', 'process'],
      online: false,
    });
  });
});
