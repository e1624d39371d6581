import { explained, logLines, startExecutor, userApi, useTopology } from '@sluice/testing';

const topology = useTopology({
  // It polls once at start and then not for an hour: only the server's wake-up can make it claim.
  startExecutor: (server) => startExecutor(server, 'sleepy-host', { SLUICE_QUEUE_POLL_INTERVAL: '1h' }),
});

describe('wake-up without a database', () => {
  it('claims work queued after it started without waiting for its poll', async () => {
    const { server, executor } = topology;
    const api = await userApi(server, 'admin');
    const flow = 'tasks:\n  - id: hello\n    type: command\n    command: ["echo", "hello"]\n';
    expect((await api.putFlow('wake', 'hello', flow)).status).toBe(200);
    const id = await api.run('wake', 'hello');
    const done = await explained({ server, executor }, () =>
      api.waitFor(id, (e) => e.taskRuns.some((r) => r.state === 'SUCCEEDED' || r.state === 'FAILED'), 30_000),
    );
    expect(done.taskRuns[0]).toMatchObject({ state: 'SUCCEEDED', ownerId: 'sleepy-host' });
  });

  it('serves /live, /ready (its server answers) and /metrics on its internal port', async () => {
    const { executor } = topology;
    const started = logLines(executor.output()).find((l) => l.message === 'executor instance started');
    const base = `http://127.0.0.1:${String(started?.internalPort)}`;
    expect((await fetch(`${base}/live`)).status).toBe(200);
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/sluice_claims_total\{executor_type="shared"\} 1/);
  });
});
