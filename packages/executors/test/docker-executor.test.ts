import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { extract } from 'tar-stream';
import type { ClaimedTaskRun } from '@sluice/protocol';
import {
  DockerExecutor,
  RunnerInjection,
  startFailureReason,
  type DockerExecutorOptions,
  type ExecutorContext,
} from '../src';
import { ensureFakeRunnerImage } from './docker-fixtures';
import {
  InMemoryExecutorProtocol,
  claimedRun,
  eventually,
  recordingLogger,
  containerExists,
  ensureRunnerImage,
  requireDocker,
} from '@sluice/testing';

/**
 * The docker executor against a real engine. The "runner" here is a shell
 * script on the image's PATH (inject_runner: false) whose behaviour follows
 * its task run ID, so each container's life is under the test's control.
 */

const OWNER = `unit-${randomBytes(3).toString('hex')}`;
let docker: Docker;
let image: string;
let protocol: InMemoryExecutorProtocol;
let ctx: ExecutorContext;
const executors: DockerExecutor[] = [];

beforeAll(async () => {
  docker = await requireDocker();
  image = await ensureFakeRunnerImage(docker);
}, 60_000);

beforeEach(() => {
  protocol = new InMemoryExecutorProtocol({ unknownTaskRuns: 'accept' });
  ctx = { protocol, runnerApiUrl: 'http://127.0.0.1:9', log: recordingLogger() };
});

afterEach(async () => {
  await Promise.all(executors.splice(0).map((e) => e.shutdown()));
  const left = await docker.listContainers({ all: true, filters: { label: [`sluice.io/owner=${OWNER}`] } });
  await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true })));
});

function executorWith(options: Partial<DockerExecutorOptions> = {}): DockerExecutor {
  const executor = new DockerExecutor({
    docker,
    ownerId: OWNER,
    runnerImage: 'sluice-test/no-such-runner:1',
    heartbeatIntervalMs: 100,
    stopGraceSeconds: 2,
    ...options,
  });
  executors.push(executor);
  return executor;
}

function dockerRun(kind: string, executor: Partial<ClaimedTaskRun['executor']> = {}): ClaimedTaskRun {
  return claimedRun({
    taskRunId: `${kind}-${randomBytes(4).toString('hex')}`,
    executor: { type: 'docker', pool: 'default', image, inject_runner: false, ...executor },
  });
}

const exists = (id: string) => containerExists(docker, id);

describe('DockerExecutor', () => {
  it('creates one labelled container per attempt with only the runner variables and the task limits', async () => {
    const executor = executorWith({ runtimeDefaults: { memory: '96Mi' } });
    const run = dockerRun('sleep', { resources: { cpu: '500m' } });
    const handle = await executor.start(run, ctx);
    const info = await docker.getContainer(handle.externalRef!).inspect();
    expect(info.Name).toBe(`/sluice-${run.taskRunId}-1`);
    expect(info.Config.Labels).toMatchObject({
      'sluice.io/owner': OWNER,
      'sluice.io/task-run': run.taskRunId,
      'sluice.io/attempt': '1',
    });
    expect(info.Config.Env.filter((e) => !e.startsWith('PATH=')).sort()).toEqual([
      'NODE_OPTIONS=',
      'SLUICE_API_URL=http://127.0.0.1:9',
      `SLUICE_RUN_TOKEN=${run.runToken}`,
      `SLUICE_TASK_RUN_ID=${run.taskRunId}`,
    ]);
    expect([info.Config.Entrypoint, info.Config.Cmd]).toEqual([['sluice'], ['exec']]);
    // The task's CPU, and PIPELINE_RUNTIME_DEFAULT_MEMORY where the task sets none.
    expect(info.HostConfig.NanoCpus).toBe(500_000_000);
    expect(info.HostConfig.Memory).toBe(96 * 2 ** 20);
    expect(info.HostConfig.NetworkMode).toBe('bridge');
    // The engine's init is PID 1, so a stop's TERM reaches the runner whatever it has set up.
    expect(info.HostConfig.Init).toBe(true);
    // The executor heartbeats its running task runs itself.
    await eventually(
      'two heartbeats',
      () => protocol.heartbeats.filter((h) => h.taskRunId === run.taskRunId).length >= 2,
    );

    await executor.cancel(handle);
    const outcome = await executor.wait(handle);
    expect(outcome.exitCode).toBe(143); // the init passed the TERM on, and sh without a trap ended at once
    expect(await exists(handle.externalRef!)).toBe(false);
  }, 30_000);

  it('lets a task that traps TERM use its grace on cancel, then removes the container', async () => {
    const executor = executorWith({ stopGraceSeconds: 10 });
    const handle = await executor.start(dockerRun('trap'), ctx);
    await executor.cancel(handle);
    const outcome = await executor.wait(handle);
    expect(outcome.exitCode).toBe(0); // it ended by itself inside the grace
    expect(await exists(handle.externalRef!)).toBe(false);
  }, 30_000);

  it('ends a container killed from outside as lost, with no result of its runner', async () => {
    const executor = executorWith();
    const handle = await executor.start(dockerRun('sleep'), ctx);
    await docker.getContainer(handle.externalRef!).kill();
    const outcome = await executor.wait(handle);
    expect(outcome).toMatchObject({ reason: 'lost', exitCode: 137 });
    expect(outcome.error).toContain('was killed');
    expect(outcome.completed).toBeFalsy();
    expect(await exists(handle.externalRef!)).toBe(false);
  }, 30_000);

  it('fails a task run that outlives DOCKER_EXECUTOR_MAX_SYNC_DURATION with max_duration and stops it', async () => {
    const executor = executorWith({ maxDurationMs: 300, stopGraceSeconds: 1 });
    const run = dockerRun('sleep');
    const handle = await executor.start(run, ctx);
    const outcome = await executor.wait(handle);
    expect(outcome.completed).toBe(true);
    expect(protocol.completions).toEqual([
      expect.objectContaining({
        taskRunId: run.taskRunId,
        fence: run.fence,
        state: 'FAILED',
        reason: 'max_duration',
      }),
    ]);
    expect(await exists(handle.externalRef!)).toBe(false);
  }, 30_000);

  it.each(['never', 'if_not_present'] as const)(
    'fails the start with reason image_pull when the image cannot be had (pull: %s)',
    async (pull) => {
      const executor = executorWith();
      const run = dockerRun('sleep', {
        image: `sluice-test/missing-${randomBytes(3).toString('hex')}:1`,
        pull,
      });
      const error = await executor.start(run, ctx).then(
        () => null,
        (err: unknown) => err,
      );
      expect(startFailureReason(error)).toBe('image_pull');
      expect(String((error as Error).message)).toContain('sluice-test/missing-');
      const left = await docker.listContainers({
        all: true,
        filters: { label: [`sluice.io/task-run=${run.taskRunId}`] },
      });
      expect(left).toEqual([]);
    },
    60_000,
  );

  it('stops heartbeating and leaves the container running at shutdown (docker work survives its executor)', async () => {
    const executor = executorWith();
    const handle = await executor.start(dockerRun('sleep'), ctx);
    const waited = executor.wait(handle);
    await executor.shutdown();
    expect((await waited).completed).toBe(true);
    const beats = protocol.heartbeats.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(protocol.heartbeats.length).toBe(beats);
    expect((await docker.getContainer(handle.externalRef!).inspect()).State.Running).toBe(true);
  }, 30_000);

  it('adopts a running container of its owner after a restart and waits on it', async () => {
    const first = executorWith();
    const run = dockerRun('sleep');
    // Started by one executor, which then goes away without touching it.
    const started = await first.start(run, ctx);
    await first.shutdown();
    const second = executorWith();
    const [info] = await docker.listContainers({ all: true, filters: { id: [started.externalRef!] } });
    const adopted = second.adopt(info!, ctx);
    expect(adopted?.run).toMatchObject({ taskRunId: run.taskRunId, attempt: 1, fence: run.fence });
    expect(second.adopt(info!, ctx)).toBeNull(); // already watched
    await docker.getContainer(started.externalRef!).kill();
    expect(await second.wait(adopted!.handle)).toMatchObject({ reason: 'lost' });
    expect(await exists(started.externalRef!)).toBe(false);
  }, 30_000);
});

describe('RunnerInjection', () => {
  it('copies the runner and its loader out of SLUICE_RUNNER_IMAGE into sluice-bin/', async () => {
    const runnerImage = await ensureRunnerImage(docker);
    const injection = new RunnerInjection(docker, runnerImage, OWNER);
    const archive = await injection.archive();
    expect(await injection.archive()).toBe(archive); // cached by image ID
    const names = await new Promise<string[]>((resolve, reject) => {
      const seen: string[] = [];
      const input = extract();
      input.on('entry', (header, stream, next) => {
        seen.push(header.name);
        stream.on('end', next);
        stream.resume();
      });
      input.on('finish', () => resolve(seen));
      input.on('error', reject);
      input.end(archive);
    });
    expect(names).toEqual(
      expect.arrayContaining(['sluice-bin/', 'sluice-bin/sluice', 'sluice-bin/lib/ld-linux-x86-64.so.2']),
    );
  }, 60_000);

  it('labels the container it copies the runner out of with the owner ID', async () => {
    const runnerImage = await ensureRunnerImage(docker);
    // An owner of its own: the event log's window starts a second early and must not hold the copies of other tests.
    const owner = `${OWNER}-copy`;
    const since = Math.floor(Date.now() / 1000) - 1;
    await new RunnerInjection(docker, runnerImage, owner).archive();
    const until = Math.floor(Date.now() / 1000) + 1;
    // The engine's event log: the copy container is gone by now, its create event is not.
    const stream = (await docker.getEvents({
      since,
      until,
      filters: JSON.stringify({
        type: ['container'],
        event: ['create'],
        label: [`sluice.io/owner=${owner}`, 'sluice.io/purpose=runner-copy'],
      }),
    })) as NodeJS.ReadableStream;
    let text = '';
    for await (const chunk of stream) text += String(chunk);
    const created = text.split('\n').filter((line) => line.trim().length > 0);
    expect(created.length).toBe(1);
    expect(JSON.parse(created[0]!)).toMatchObject({ Actor: { Attributes: { 'sluice.io/owner': owner } } });
  }, 60_000);

  it('names SLUICE_RUNNER_IMAGE when it is not on the engine', async () => {
    const error = await new RunnerInjection(docker, 'sluice-test/no-such-runner:1', OWNER).archive().then(
      () => null,
      (err: unknown) => err,
    );
    expect(startFailureReason(error)).toBe('image_pull');
    expect(String((error as Error).message)).toContain('SLUICE_RUNNER_IMAGE sluice-test/no-such-runner:1');
  });
});
