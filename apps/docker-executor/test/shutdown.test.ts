import { explained, startExecutor, userApi, useTopology } from '@sluice/testing';

const topology = useTopology({ startExecutor: (server) => startExecutor(server, 'stopping-host') });

describe('SIGTERM to an executor', () => {
  it('ends its process task runs with instance_shutdown and exits 0', async () => {
    const { server, executor } = topology;
    const api = await userApi(server, 'admin');
    const flow = 'tasks:\n  - id: long\n    type: command\n    command: ["sleep", "120"]\n';
    expect((await api.putFlow('stop', 'long', flow)).status).toBe(200);
    const id = await api.run('stop', 'long');
    await explained({ server, executor }, () =>
      api.waitFor(id, (e) => e.taskRuns.some((r) => r.state === 'RUNNING'), 30_000),
    );

    expect(await executor.stop('SIGTERM')).toBe(0);
    const run = (await api.execution(id)).taskRuns.find((r) => r.attempt === 1);
    expect(run).toMatchObject({ state: 'FAILED', reason: 'instance_shutdown', ownerId: 'stopping-host' });
    expect(executor.output()).toContain('"executor instance stopped"');
  });
});
