import { randomBytes } from 'node:crypto';
import { ended, explained, noContainersLeft, runningContainerOf, userApi } from '@sluice/testing';
import { useDockerTopology } from './docker-support';

/**
 * Flows whose tasks run in containers, end to end: a real server, jobs and
 * `sluice docker-executor` on a real Docker engine. The runner is injected
 * into images with no Node.js (busybox-static: not even a libc; glibc without
 * libstdc++), or taken from the image's PATH with inject_runner: false.
 */

const SECRET_VALUE = `sk-docker-${randomBytes(8).toString('hex')}`;
const OWNER = `flows-${randomBytes(3).toString('hex')}`;

const topology = useDockerTopology(OWNER);

const TASK = [
  'sh',
  '-c',
  'echo "hello from $(uname -s)"; echo to-stderr >&2; echo "answer=42" >> "$SLUICE_OUTPUTS"; ' +
    '[ -n "$API_TOKEN" ] && echo secret-arrived; exit 0',
];

async function runFlow(name: string, image: string, extra = '', command = TASK) {
  const { server, everything } = topology;
  const api = await userApi(server, 'admin');
  const flow = [
    'retry: { max_attempts: 1 }',
    'tasks:',
    '  - id: main',
    '    type: command',
    `    executor: { type: docker, image: "${image}"${extra} }`,
    `    command: ${JSON.stringify(command)}`,
    '    env:',
    '      API_TOKEN: { secret: api-token }',
    '',
  ].join('\n');
  expect((await api.putSecret('dock', 'api-token', SECRET_VALUE)).status).toBeLessThan(300);
  expect((await api.putFlow('dock', name, flow)).status).toBe(200);
  const id = await api.run('dock', name);
  const execution = await explained(everything(), () => api.waitFor(id, ended, 90_000));
  return { api, execution };
}

describe('docker executor: flows in containers', () => {
  it.each([
    ['busybox-static (no libc)', () => topology.fx.busybox],
    ['glibc without libstdc++', () => topology.fx.glibc],
  ])(
    'runs a task in %s through the injected runner: logs, outputs and exit code arrive',
    async (_, image) => {
      const { fx } = topology;
      const name = `inj-${randomBytes(3).toString('hex')}`;
      const { api, execution } = await runFlow(name, image());
      expect(execution.state).toBe('SUCCEEDED');
      const [run] = execution.taskRuns;
      expect(run).toMatchObject({ state: 'SUCCEEDED', attempt: 1, ownerId: OWNER });
      expect(run!.executor).toMatchObject({ type: 'docker', image: image() });
      expect(run!.externalRef).toMatch(/^[0-9a-f]{64}$/);
      expect(run!.outputs).toEqual({ answer: '42' });
      const logs = await api.logs(run!.id);
      expect(logs.filter((l) => l.stream === 'stdout').map((l) => l.line)).toEqual([
        'hello from Linux',
        'secret-arrived',
      ]);
      expect(logs.filter((l) => l.stream === 'stderr').map((l) => l.line)).toEqual(['to-stderr']);
      const detail = await api.call('GET', `/api/v1/executions/${execution.id}`);
      const stored = (detail.body.taskRuns as Array<{ exitCode: number | null }>)[0];
      expect(stored?.exitCode).toBe(0);
      // The container is removed once its result is in.
      expect(await noContainersLeft(fx.docker, OWNER)).toEqual([]);
    },
    120_000,
  );

  it('reports a non-zero exit code of the task as FAILED / exit_code', async () => {
    const { fx } = topology;
    const { execution } = await runFlow(`exit-${randomBytes(3).toString('hex')}`, fx.busybox, '', [
      'sh',
      '-c',
      'echo before; exit 3',
    ]);
    expect(execution.state).toBe('FAILED');
    expect(execution.taskRuns[0]).toMatchObject({ state: 'FAILED', reason: 'exit_code' });
  }, 120_000);

  it('runs the runner from the image PATH with inject_runner: false', async () => {
    const { fx } = topology;
    const { execution } = await runFlow(
      `own-${randomBytes(3).toString('hex')}`,
      fx.runner,
      ', inject_runner: false',
    );
    expect(execution.state).toBe('SUCCEEDED');
    expect(execution.taskRuns[0]!.outputs).toEqual({ answer: '42' });
  }, 120_000);

  it('shows no secret value in the container env, command or labels, and removes a cancelled container', async () => {
    const { fx, server, everything } = topology;
    const api = await userApi(server, 'admin');
    const name = `inspect-${randomBytes(3).toString('hex')}`;
    expect((await api.putSecret('dock', 'api-token', SECRET_VALUE)).status).toBeLessThan(300);
    const flow = [
      'tasks:',
      '  - id: main',
      '    type: command',
      `    executor: { type: docker, image: "${fx.busybox}" }`,
      '    command: ["sh", "-c", "echo started; sleep 30"]',
      '    env:',
      '      API_TOKEN: { secret: api-token }',
      '',
    ].join('\n');
    expect((await api.putFlow('dock', name, flow)).status).toBe(200);
    const id = await api.run('dock', name);
    // This execution's own container: the previous test's may still be on its way out.
    const claimed = await explained(everything(), () =>
      api.waitFor(id, (e) => e.taskRuns.length > 0, 30_000),
    );
    const taskRunId = claimed.taskRuns[0]!.id;
    const container = await explained(everything(), () =>
      runningContainerOf(fx.docker, OWNER, 30_000, taskRunId),
    );
    const info = await fx.docker.getContainer(container.Id).inspect();
    const names = (info.Config.Env ?? []).map((e) => e.split('=')[0]);
    expect(names.filter((n) => n !== 'PATH').sort()).toEqual([
      'NODE_OPTIONS',
      'SLUICE_API_URL',
      'SLUICE_RUN_TOKEN',
      'SLUICE_TASK_RUN_ID',
    ]);
    const visible = JSON.stringify([
      info.Config.Env,
      info.Config.Cmd,
      info.Config.Entrypoint,
      info.Config.Labels,
    ]);
    expect(visible).not.toContain(SECRET_VALUE);
    expect(info.Config.Labels).toMatchObject({ 'sluice.io/owner': OWNER, 'sluice.io/attempt': '1' });
    expect(info.Name).toMatch(/^\/sluice-.+-1$/);
    // Cancel once the task runs: the runner passes the container's TERM on to it.
    await explained(everything(), async () => {
      const deadline = Date.now() + 30_000;
      while (!(await api.logs(taskRunId)).some((l) => l.line === 'started')) {
        if (Date.now() > deadline) throw new Error(`task run ${taskRunId} logged no "started" within 30 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    });
    await api.call('POST', `/api/v1/executions/${id}/cancel`);
    const done = await explained(everything(), () => api.waitFor(id, ended, 60_000));
    expect(done.state).toBe('CANCELLED');
    expect(done.taskRuns.map((r) => r.state)).toEqual(['CANCELLED']);
    expect(await noContainersLeft(fx.docker, OWNER)).toEqual([]);
  }, 240_000);
});
