import { explained, sleep, startExecutor, userApi, useTopology } from '@sluice/testing';

const topology = useTopology({
  startExecutor: (server) => startExecutor(server, 'two-slots', { DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS: '2' }),
});

const SIX_SLEEPS = `tasks:\n${[1, 2, 3, 4, 5, 6]
  .map((n) => `  - id: nap-${n}\n    type: command\n    command: ["sleep", "1"]\n`)
  .join('')}`;

describe('DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS', () => {
  it('never lets more than that many task runs run at once on the instance', async () => {
    const { server, executor } = topology;
    const api = await userApi(server, 'admin');
    expect((await api.putFlow('naps', 'six', SIX_SLEEPS)).status).toBe(200);
    const id = await api.run('naps', 'six');
    let most = 0;
    const deadline = Date.now() + 40_000;
    for (;;) {
      const e = await api.execution(id);
      const active = e.taskRuns.filter((r) => r.state === 'STARTING' || r.state === 'RUNNING');
      most = Math.max(most, active.length);
      if (e.taskRuns.length === 6 && e.taskRuns.every((r) => r.state === 'SUCCEEDED')) {
        expect(e.taskRuns.every((r) => r.ownerId === 'two-slots')).toBe(true);
        break;
      }
      if (Date.now() > deadline) {
        await explained({ server, executor }, () => {
          throw new Error(
            `timed out: ${JSON.stringify(e.taskRuns.map((r) => [r.taskId, r.state, r.reason]))}`,
          );
        });
      }
      await sleep(100);
    }
    expect(most).toBe(2);
  });
});
