import { noopLogger } from '@sluice/executors';
import {
  createInstance,
  INLINE_SLOTS,
  type Instance,
  type InstanceOptions,
  type SlotGroupConfig,
} from '../src';
import { eventually, InMemoryExecutorProtocol } from '@sluice/testing';
import { ControlledExecutor } from './controlled-executor';

const HOUR = 3_600_000;

/** A standalone server's groups (@sluice/executor-runtime builds them): process and docker share the slots. */
function standaloneSlotGroups(workerSlots: number): SlotGroupConfig[] {
  return [
    { name: 'shared', executorTypes: ['process', 'docker'], slots: workerSlots },
    { name: 'inline', executorTypes: ['inline'], slots: INLINE_SLOTS },
  ];
}

describe('instance', () => {
  let events: string[];
  let protocol: InMemoryExecutorProtocol;
  let process: ControlledExecutor;
  let docker: ControlledExecutor;
  let inline: ControlledExecutor;
  let instance: Instance | null;

  beforeEach(() => {
    events = [];
    protocol = new InMemoryExecutorProtocol({ events });
    process = new ControlledExecutor('process', events);
    docker = new ControlledExecutor('docker', events);
    inline = new ControlledExecutor('inline', events);
    instance = null;
  });
  afterEach(async () => {
    await instance?.stop('shutdown');
  });

  function startInstance(overrides: Partial<InstanceOptions> = {}): Promise<void> {
    instance = createInstance({
      instanceId: 'instance-a',
      type: 'standalone',
      version: 'test',
      protocol,
      executors: [process, docker, inline],
      pools: ['default'],
      slotGroups: standaloneSlotGroups(3),
      pollIntervalMs: HOUR, // claims in these tests come from starts, ends and wakes, never from the timer
      runnerApiUrl: 'http://127.0.0.1:8081',
      log: noopLogger,
      ...overrides,
    });
    return instance.start();
  }

  it('registers its capacity per executor type, pools and executors', async () => {
    await startInstance({ pools: ['default', 'gpu'] });
    expect(protocol.registrations[0]).toMatchObject({
      instanceId: 'instance-a',
      type: 'standalone',
      capacity: { process: 3, docker: 3, inline: 64 },
      pools: ['default', 'gpu'],
      executors: ['process', 'docker', 'inline'],
    });
  });

  it('prepares every executor once it is registered, before its first claim', async () => {
    const claimsAtPrepare: number[] = [];
    process.prepare = () => claimsAtPrepare.push(protocol.claims.length);
    await startInstance();
    expect(claimsAtPrepare).toEqual([0]);
    expect(events).toEqual(expect.arrayContaining(['prepare docker', 'prepare inline']));
    await eventually('a claim', () => protocol.claims.length > 0);
  });

  it('never runs more than its slots and claims only as many task runs as it has free slots', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => protocol.enqueue(i % 2 === 0 ? 'process' : 'docker'));
    const sharedRunning = () => process.running() + docker.running();
    let mostRunning = 0;
    for (const executor of [process, docker]) {
      executor.onStart = () => (mostRunning = Math.max(mostRunning, sharedRunning() + 1));
    }
    const tooLarge: number[] = [];
    protocol.onClaim = (request) => {
      const running = instance?.running().filter((r) => r.executor.type !== 'inline').length ?? 0;
      if (request.executorTypes.includes('process') && request.limit > 3 - running)
        tooLarge.push(request.limit);
    };

    await startInstance();
    await eventually('three task runs to start', () => sharedRunning() === 3);
    // One at a time, as runners that report their results and exit; each end lets exactly one more in.
    for (let ended = 0; ended < ids.length; ended++) {
      const [executor, id] = await eventually('a running task run', () => {
        const p = [...process.work.keys()][0];
        const d = [...docker.work.keys()][0];
        return p ? ([process, p] as const) : d ? ([docker, d] as const) : undefined;
      });
      protocol.completeAsRunner(id, 'SUCCEEDED');
      executor.finish(id);
      await eventually(
        `${id} to leave the instance`,
        () => !instance?.running().some((r) => r.taskRunId === id),
      );
    }

    expect(mostRunning).toBe(3);
    expect(tooLarge).toEqual([]);
    expect(ids.map((id) => protocol.stateOf(id).state)).toEqual(Array(10).fill('SUCCEEDED'));
  });

  it('claims nothing for an executor that may not claim, its group-mates still do, and claims it again once allowed', async () => {
    const dockerRun = protocol.enqueue('docker');
    const processRun = protocol.enqueue('process');
    let dockerAnswers = false;
    await startInstance({ claimable: (type) => type !== 'docker' || dockerAnswers });
    await eventually('the process task run to start', () => process.started.includes(processRun));
    expect(protocol.claims.every((c) => !c.executorTypes.includes('docker'))).toBe(true);
    expect(docker.started).toEqual([]);
    expect(protocol.stateOf(dockerRun).state).toBe('QUEUED');

    dockerAnswers = true;
    instance?.wake();
    await eventually('the docker task run to start', () => docker.started.includes(dockerRun));
  });

  it('claims at once when a local task run ends, without waiting for the poll', async () => {
    const first = protocol.enqueue('process');
    const second = protocol.enqueue('process');
    await startInstance({ slotGroups: standaloneSlotGroups(1) });
    await eventually('the first task run to start', () => process.started.includes(first));
    expect(process.started).not.toContain(second);

    protocol.completeAsRunner(first, 'SUCCEEDED');
    process.finish(first);

    await eventually('the second task run to start', () => process.started.includes(second));
  });

  it('claims on wake(), and many wakes at once make at most one extra claim pass', async () => {
    await startInstance();
    const claimsBefore = protocol.claims.length;
    const id = protocol.enqueue('inline');

    for (let i = 0; i < 5; i++) instance?.wake();

    await eventually('the woken claim to start the task run', () => inline.started.includes(id));
    // Per slot group: the pass that starts at once plus one coalesced follow-up.
    expect(protocol.claims.length - claimsBefore).toBeLessThanOrEqual(4);
  });

  it('records the external reference with the fence of its claim', async () => {
    const id = protocol.enqueue('docker');
    await startInstance();
    await eventually('the external reference', () => protocol.stateOf(id).externalRef === `docker:${id}`);
  });

  it('delivers a requested cancel to the executor, once', async () => {
    const id = protocol.enqueue('process');
    await startInstance({ pollIntervalMs: 20 });
    await eventually('the task run to start', () => process.started.includes(id));

    protocol.cancels.add(id);

    await eventually('the cancel to reach the executor', () => process.cancelled.includes(id));
    const cancelChecks = protocol.claims.length;
    await eventually('a few more polls', () => protocol.claims.length >= cancelChecks + 3);
    expect(process.cancelled).toEqual([id]);
  });

  it('fails a task run whose runner exited without reporting a result', async () => {
    const id = protocol.enqueue('process');
    await startInstance();
    await eventually('the task run to start', () => process.started.includes(id));

    process.finish(id, { exitCode: 3, signal: null });

    await eventually('the task run to end', () => protocol.stateOf(id).state === 'FAILED');
    expect(protocol.stateOf(id)).toMatchObject({
      reason: 'error',
      error: 'runner exited with code 3 without reporting a result',
    });
  });

  it('ends a task run CANCELLED when the executor stopped it for a cancel and nobody reported', async () => {
    const id = protocol.enqueue('process');
    await startInstance();
    await eventually('the task run to start', () => process.started.includes(id));

    // As the process executor answers for a runner it SIGTERMed before the runner's handler was in place.
    process.finish(id, { exitCode: null, signal: 'SIGTERM', cancelled: true });

    await eventually('the task run to end', () =>
      ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(protocol.stateOf(id).state),
    );
    expect(protocol.stateOf(id)).toMatchObject({ state: 'CANCELLED', reason: 'cancelled' });
  });

  it('keeps the result the runner reported before it exited', async () => {
    const id = protocol.enqueue('process');
    await startInstance();
    await eventually('the task run to start', () => process.started.includes(id));

    protocol.completeAsRunner(id, 'CANCELLED');
    process.finish(id, { exitCode: 143, signal: null });

    await eventually('the fallback completion attempt', () =>
      protocol.completions.some((c) => c.taskRunId === id),
    );
    expect(protocol.stateOf(id).state).toBe('CANCELLED');
  });

  it('fails a task run whose executor could not start it, with the reason', async () => {
    process.onStart = () => {
      throw new Error('could not start the runner /opt/sluice: ENOENT');
    };
    const id = protocol.enqueue('process');
    await startInstance();

    await eventually('the task run to end', () => protocol.stateOf(id).state === 'FAILED');
    expect(protocol.stateOf(id)).toMatchObject({
      reason: 'error',
      error: 'could not start the task run: could not start the runner /opt/sluice: ENOENT',
    });
  });

  it('stops work whose task run ended before its start was recorded, and writes nothing for it', async () => {
    const id = protocol.enqueue('process');
    process.onStart = (run) => protocol.completeAsRunner(run.taskRunId, 'CANCELLED'); // e.g. a user cancel
    await startInstance();

    await eventually('the cancel to reach the executor', () => process.cancelled.includes(id));
    process.finish(id, { exitCode: null, signal: 'SIGTERM' });
    await eventually('the slot to be freed', () => instance?.running().length === 0);
    expect(protocol.completions.filter((c) => c.taskRunId === id)).toEqual([]);
    expect(protocol.stateOf(id).state).toBe('CANCELLED');
  });

  it('on shutdown ends process and inline task runs with instance_shutdown first, leaves docker work running', async () => {
    const p = protocol.enqueue('process');
    const i = protocol.enqueue('inline');
    const d = protocol.enqueue('docker');
    await startInstance();
    await eventually('three task runs to start', () => instance?.running().length === 3);

    await instance?.stop('shutdown');

    for (const id of [p, i]) {
      expect(protocol.stateOf(id)).toMatchObject({
        state: 'FAILED',
        reason: 'instance_shutdown',
      });
      const completedAt = events.indexOf(`complete ${id} FAILED instance_shutdown`);
      expect(completedAt).toBeGreaterThanOrEqual(0);
      expect(completedAt).toBeLessThan(events.indexOf('shutdown process'));
      expect(completedAt).toBeLessThan(events.indexOf('shutdown inline'));
    }
    // The dying runner's later "no result" is not written over the shutdown.
    expect(protocol.completions.filter((c) => c.taskRunId === p)).toHaveLength(1);
    expect(protocol.stateOf(d).state).toBe('STARTING');
    expect(docker.cancelled).toEqual([]);
    expect(instance?.running().map((r) => r.taskRunId)).toEqual([d]);

    const claims = protocol.claims.length;
    protocol.enqueue('process');
    instance?.wake();
    expect(protocol.claims.length).toBe(claims);
  });
});
