import { randomBytes } from 'node:crypto';
import {
  createTestDatabase,
  dockerFixtures,
  ended,
  explained,
  noContainersLeft,
  ownedContainers,
  removeOwned,
  runningContainerOf,
  sleep,
  startJobs,
  startServer,
  userApi,
  type AppProcess,
  type DockerFixtures,
  type ServerProcess,
  type TestDatabase,
} from '@sluice/testing';
import { startDockerExecutor } from './docker-support';

/**
 * What happens to docker work around it: a container killed from outside,
 * the max duration, the slots, and an executor killed and restarted under
 * the same owner ID (cleanup and adoption).
 */

let fx: DockerFixtures;
let db: TestDatabase;
let server: ServerProcess;
let jobs: AppProcess;
const processes: Record<string, AppProcess> = {};
const owners: string[] = [];

beforeAll(async () => {
  fx = await dockerFixtures();
  db = await createTestDatabase();
  server = await startServer(db.url, { PIPELINE_HEARTBEAT_TIMEOUT: '5s' });
  jobs = await startJobs(db.url, {
    PIPELINE_JOB_SCHEDULER_INTERVAL: '200ms',
    PIPELINE_JOB_WATCHDOG_INTERVAL: '1s',
    PIPELINE_HEARTBEAT_TIMEOUT: '5s',
  });
}, 120_000);

afterEach(async () => {
  await Promise.all(Object.values(processes).map((p) => p.stop()));
  for (const key of Object.keys(processes)) delete processes[key];
});

afterAll(async () => {
  await jobs?.stop();
  await server?.stop();
  if (fx) for (const owner of owners) await removeOwned(fx.docker, owner);
  await db?.drop();
});

function newOwner(): string {
  const owner = `life-${randomBytes(3).toString('hex')}`;
  owners.push(owner);
  return owner;
}

const everything = () => ({ ...processes, jobs, server });

async function runFlow(name: string, flowYaml: string) {
  const api = await userApi(server, 'admin');
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
  return explained(everything(), () => runningContainerOf(fx.docker, owner));
}

describe('docker executor: lost work, limits and restarts', () => {
  it('ends a container killed from outside FAILED / lost, and runs attempt 2 in a new container', async () => {
    const owner = newOwner();
    processes.executor = await startDockerExecutor(server, owner, fx);
    const { api, id } = await runFlow(
      'killed',
      flow(
        fx.busybox,
        'if [ "$SLUICE_ATTEMPT" = 1 ]; then sleep 60; fi; echo attempt-$SLUICE_ATTEMPT-ok',
        'retry: { max_attempts: 2 }',
      ),
    );
    const first = await runningContainer(owner);
    await fx.docker.getContainer(first.Id).kill();
    const done = await explained(everything(), () => api.waitFor(id, ended, 90_000));
    expect(done.state).toBe('SUCCEEDED');
    const runs = [...done.taskRuns].sort((a, b) => a.attempt - b.attempt);
    expect(runs.map((r) => [r.attempt, r.state, r.reason])).toEqual([
      [1, 'FAILED', 'lost'],
      [2, 'SUCCEEDED', null],
    ]);
    expect(runs[0]!.externalRef).toBe(first.Id);
    expect(runs[1]!.externalRef).not.toBe(first.Id);
    expect((await api.logs(runs[1]!.id)).map((l) => l.line)).toContain('attempt-2-ok');
    expect(await noContainersLeft(fx.docker, owner)).toEqual([]);
  }, 120_000);

  it('stops a task run at DOCKER_EXECUTOR_MAX_SYNC_DURATION and fails it with max_duration', async () => {
    const owner = newOwner();
    processes.executor = await startDockerExecutor(server, owner, fx, {
      DOCKER_EXECUTOR_MAX_SYNC_DURATION: '2s',
    });
    const { api, id } = await runFlow('too-long', flow(fx.busybox, 'sleep 60'));
    const done = await explained(everything(), () => api.waitFor(id, ended, 60_000));
    expect(done.taskRuns.map((r) => [r.state, r.reason])).toEqual([['FAILED', 'max_duration']]);
    expect(await noContainersLeft(fx.docker, owner)).toEqual([]);
  }, 90_000);

  it('never runs more containers at once than its slots', async () => {
    const owner = newOwner();
    processes.executor = await startDockerExecutor(server, owner, fx, {
      DOCKER_EXECUTOR_MAX_CONCURRENT_JOBS: '2',
    });
    const tasks = Array.from({ length: 5 }, (_, i) =>
      [
        `  - id: t${i}`,
        '    type: command',
        `    executor: { type: docker, image: "${fx.busybox}" }`,
        '    command: ["sh", "-c", "sleep 1"]',
      ].join('\n'),
    );
    const { api, id } = await runFlow('slots', `tasks:\n${tasks.join('\n')}\n`);
    let most = 0;
    let done = await api.execution(id);
    while (!ended(done)) {
      const live = (await ownedContainers(fx.docker, owner)).filter((c) => c.State !== 'exited');
      most = Math.max(most, live.length);
      await sleep(50);
      done = await api.execution(id);
    }
    expect(done.state).toBe('SUCCEEDED');
    expect(done.taskRuns).toHaveLength(5);
    expect(most).toBe(2);
  }, 120_000);

  it('keeps a task running through an executor kill -9; the restart adopts it and removes only its own leftovers', async () => {
    const owner = newOwner();
    processes.executor = await startDockerExecutor(server, owner, fx);
    const { api, id } = await runFlow('survivor', flow(fx.busybox, 'sleep 15; echo finished-after-restart'));
    const container = await runningContainer(owner);
    // Killed once the server knows the container (its external reference), as any time later would be.
    await explained(everything(), () =>
      api.waitFor(id, (e) => e.taskRuns[0]?.externalRef === container.Id, 30_000),
    );
    processes.executor.proc.kill('SIGKILL');
    await processes.executor.exited;

    // Left behind by an earlier life of this owner (a task run the server never heard of), and another owner's.
    const stray = await fx.docker.createContainer({
      Image: fx.busybox,
      Entrypoint: ['sleep', '60'],
      Labels: {
        'sluice.io/owner': owner,
        'sluice.io/task-run': 'no-such-task-run',
        'sluice.io/attempt': '1',
        'sluice.io/fence': '1',
      },
    });
    const other = newOwner();
    const foreign = await fx.docker.createContainer({
      Image: fx.busybox,
      Entrypoint: ['sleep', '60'],
      Labels: {
        'sluice.io/owner': other,
        'sluice.io/task-run': 'no-such-task-run',
        'sluice.io/attempt': '1',
        'sluice.io/fence': '1',
      },
    });

    processes.executor = await startDockerExecutor(server, owner, fx);
    const done = await explained(everything(), () => api.waitFor(id, ended, 60_000));
    expect(done.taskRuns.map((r) => [r.attempt, r.state])).toEqual([[1, 'SUCCEEDED']]);
    expect(done.taskRuns[0]!.externalRef).toBe(container.Id);
    expect((await api.logs(done.taskRuns[0]!.id)).map((l) => l.line)).toContain('finished-after-restart');
    expect(processes.executor.output()).toContain('adopted a container whose task run still runs');
    expect(await noContainersLeft(fx.docker, owner)).toEqual([]);
    await expect(fx.docker.getContainer(stray.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect((await fx.docker.getContainer(foreign.id).inspect()).Id).toBe(foreign.id);
  }, 120_000);
});
