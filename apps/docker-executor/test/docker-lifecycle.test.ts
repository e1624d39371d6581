import {
  ended,
  explained,
  noContainersLeft,
  ownedContainers,
  runningContainerOf,
  sleep,
  userApi,
} from '@sluice/testing';
import { startDockerExecutor, useDockerServer } from './docker-support';

/**
 * What happens to docker work around it: a container killed from outside,
 * the max duration, the slots, and an executor killed and restarted under
 * the same owner ID (cleanup and adoption).
 */

const t = useDockerServer();

async function runFlow(name: string, flowYaml: string) {
  const api = await userApi(t.server, 'admin');
  expect((await api.putFlow('life', name, flowYaml)).status).toBe(200);
  return { api, id: await api.run('life', name) };
}

const flow = (image: string, script: string, head = 'retry: { max_attempts: 1 }') =>
  [
    head,
    'tasks:',
    '  - id: main',
    '    type: command',
    `    executor: { type: docker, image: "${image}" }`,
    `    command: ${JSON.stringify(['sh', '-c', script])}`,
    '',
  ].join('\n');

function runningContainer(owner: string) {
  return explained(t.everything(), () => runningContainerOf(t.fx.docker, owner));
}

describe('docker executor: lost work, limits and restarts', () => {
  it('ends a container killed from outside FAILED / lost, and runs attempt 2 in a new container', async () => {
    const owner = t.newOwner('life');
    t.processes.executor = await startDockerExecutor(t.server, owner, t.fx);
    const { api, id } = await runFlow(
      'killed',
      flow(
        t.fx.busybox,
        'if [ "$SLUICE_ATTEMPT" = 1 ]; then sleep 60; fi; echo attempt-$SLUICE_ATTEMPT-ok',
        'retry: { max_attempts: 2 }',
      ),
    );
    const first = await runningContainer(owner);
    await t.fx.docker.getContainer(first.Id).kill();
    const done = await explained(t.everything(), () => api.waitFor(id, ended, 90_000));
    expect(done.state).toBe('SUCCEEDED');
    const runs = [...done.taskRuns].sort((a, b) => a.attempt - b.attempt);
    expect(runs.map((r) => [r.attempt, r.state, r.reason])).toEqual([
      [1, 'FAILED', 'lost'],
      [2, 'SUCCEEDED', null],
    ]);
    expect(runs[0]!.externalRef).toBe(first.Id);
    expect(runs[1]!.externalRef).not.toBe(first.Id);
    expect((await api.logs(runs[1]!.id)).map((l) => l.line)).toContain('attempt-2-ok');
    expect(await noContainersLeft(t.fx.docker, owner)).toEqual([]);
  }, 120_000);

  it('stops a task run at DOCKER_EXECUTOR_MAX_SYNC_DURATION and fails it with max_duration', async () => {
    const owner = t.newOwner('life');
    t.processes.executor = await startDockerExecutor(t.server, owner, t.fx, {
      DOCKER_EXECUTOR_MAX_SYNC_DURATION: '2s',
    });
    const { api, id } = await runFlow('too-long', flow(t.fx.busybox, 'sleep 60'));
    const done = await explained(t.everything(), () => api.waitFor(id, ended, 60_000));
    expect(done.taskRuns.map((r) => [r.state, r.reason])).toEqual([['FAILED', 'max_duration']]);
    expect(await noContainersLeft(t.fx.docker, owner)).toEqual([]);
  }, 90_000);

  it('never runs more containers at once than its slots', async () => {
    const owner = t.newOwner('life');
    t.processes.executor = await startDockerExecutor(t.server, owner, t.fx, {
      DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS: '2',
    });
    const tasks = Array.from({ length: 5 }, (_, i) =>
      [
        `  - id: t${i}`,
        '    type: command',
        `    executor: { type: docker, image: "${t.fx.busybox}" }`,
        '    command: ["sh", "-c", "sleep 1"]',
      ].join('\n'),
    );
    const { api, id } = await runFlow('slots', `tasks:\n${tasks.join('\n')}\n`);
    let most = 0;
    let done = await api.execution(id);
    while (!ended(done)) {
      const live = (await ownedContainers(t.fx.docker, owner)).filter((c) => c.State !== 'exited');
      most = Math.max(most, live.length);
      await sleep(50);
      done = await api.execution(id);
    }
    expect(done.state).toBe('SUCCEEDED');
    expect(done.taskRuns).toHaveLength(5);
    expect(most).toBe(2);
  }, 120_000);

  it('keeps a task running through an executor kill -9; the restart adopts it and removes only its own leftovers', async () => {
    const owner = t.newOwner('life');
    t.processes.executor = await startDockerExecutor(t.server, owner, t.fx);
    const { api, id } = await runFlow(
      'survivor',
      flow(t.fx.busybox, 'sleep 15; echo finished-after-restart'),
    );
    const container = await runningContainer(owner);
    // Killed once the server knows the container (its external reference), as any time later would be.
    await explained(t.everything(), () =>
      api.waitFor(id, (e) => e.taskRuns[0]?.externalRef === container.Id, 30_000),
    );
    t.processes.executor.proc.kill('SIGKILL');
    await t.processes.executor.exited;

    // Left behind by an earlier life of this owner (a task run the server never heard of), and another owner's.
    const stray = await t.fx.docker.createContainer({
      Image: t.fx.busybox,
      Entrypoint: ['sleep', '60'],
      Labels: {
        'sluice.io/owner': owner,
        'sluice.io/task-run': 'no-such-task-run',
        'sluice.io/attempt': '1',
        'sluice.io/fence': '1',
      },
    });
    const other = t.newOwner('life');
    const foreign = await t.fx.docker.createContainer({
      Image: t.fx.busybox,
      Entrypoint: ['sleep', '60'],
      Labels: {
        'sluice.io/owner': other,
        'sluice.io/task-run': 'no-such-task-run',
        'sluice.io/attempt': '1',
        'sluice.io/fence': '1',
      },
    });

    t.processes.executor = await startDockerExecutor(t.server, owner, t.fx);
    const done = await explained(t.everything(), () => api.waitFor(id, ended, 60_000));
    expect(done.taskRuns.map((r) => [r.attempt, r.state])).toEqual([[1, 'SUCCEEDED']]);
    expect(done.taskRuns[0]!.externalRef).toBe(container.Id);
    expect((await api.logs(done.taskRuns[0]!.id)).map((l) => l.line)).toContain('finished-after-restart');
    expect(t.processes.executor.output()).toContain('adopted a container whose task run still runs');
    expect(await noContainersLeft(t.fx.docker, owner)).toEqual([]);
    await expect(t.fx.docker.getContainer(stray.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect((await t.fx.docker.getContainer(foreign.id).inspect()).Id).toBe(foreign.id);
  }, 120_000);
});
