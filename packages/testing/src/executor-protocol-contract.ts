/// <reference types="jest" />
// Registers jest hooks and tests: only test files import this.
import { randomUUID } from 'node:crypto';
import {
  StaleFenceError,
  type ClaimedTaskRun,
  type ExecutorProtocol,
  type ExecutorType,
} from '@sluice/protocol';

/**
 * The executor contract: what every ExecutorProtocol binding answers, so an
 * executor behaves the same whichever one its instance was given (the
 * in-process binding of a standalone server, the HTTP client of an executor
 * app). One suite, run against each binding over a real server side.
 */

/** A task run as the server stores it: what the contract checks after each call. */
export interface StoredTaskRunView {
  state: string;
  fence: number;
  ownerId: string | null;
  reason: string | null;
  exitCode: number | null;
  error: string | null;
  externalRef: string | null;
}

/** One binding under test and the server side it talks to. */
export interface ExecutorProtocolBinding {
  protocol: ExecutorProtocol;
  /**
   * Starts an execution of a flow with `tasks` independent command tasks on
   * the executor block and answers its queued task run ids, in task order.
   */
  queue(executor: { type: ExecutorType; pool: string }, tasks?: number): Promise<QueuedExecution>;
  taskRun(taskRunId: string): Promise<StoredTaskRunView>;
  /** The stored log lines of a task run, in seq order. */
  logLines(taskRunId: string): Promise<Array<{ seq: number; stream: string; line: string }>>;
  /** A registered instance as the executor list shows it; null when none has the id. */
  instance(instanceId: string): Promise<{ version: string; pools: string[] } | null>;
  /** Cancels the execution as a user would. */
  cancel(executionId: string): Promise<void>;
  close(): Promise<void>;
}

export interface QueuedExecution {
  executionId: string;
  taskRunIds: string[];
}

const INSTANCE = 'contract-instance';
const ts = () => new Date().toISOString();

/** Registers the contract's tests for one binding; `makeBinding` runs once, in beforeAll. */
export function describeExecutorProtocolContract(
  name: string,
  makeBinding: () => Promise<ExecutorProtocolBinding>,
): void {
  describe(`the executor protocol contract: ${name}`, () => {
    let b: ExecutorProtocolBinding;
    beforeAll(async () => {
      b = await makeBinding();
    }, 60_000);
    afterAll(async () => {
      await b?.close();
    });

    /** A pool of its own per test: no test claims another's task runs. */
    const newPool = () => `pool-${randomUUID().slice(0, 8)}`;
    const claimOne = async (pool: string): Promise<ClaimedTaskRun> => {
      const [run, ...more] = await b.protocol.claim({
        instanceId: INSTANCE,
        executorTypes: ['process'],
        pools: [pool],
        limit: 1,
      });
      expect(more).toEqual([]);
      if (!run) throw new Error(`nothing to claim in ${pool}`);
      return run;
    };
    const queuedAndClaimed = async () => {
      const pool = newPool();
      const queued = await b.queue({ type: 'process', pool });
      const run = await claimOne(pool);
      return { ...queued, pool, run, ref: { taskRunId: run.taskRunId, fence: run.fence } };
    };
    /** What a call with a stale fence must do in every binding: throw StaleFenceError. */
    const expectStale = async (call: Promise<unknown>) => {
      const error = await call.then(
        () => new Error('the call succeeded'),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StaleFenceError);
      expect(error).toMatchObject({ code: 'stale_fence' });
    };

    describe('register', () => {
      it('records the instance, and a second registration updates it', async () => {
        const instanceId = `reg-${randomUUID().slice(0, 8)}`;
        const registration = {
          instanceId,
          type: 'docker-executor' as const,
          version: '1.0.0',
          capacity: { process: 2 },
          pools: ['a'],
          executors: ['process' as const],
          resourceDefaults: {},
        };
        await b.protocol.register(registration);
        expect(await b.instance(instanceId)).toEqual({ version: '1.0.0', pools: ['a'] });
        await b.protocol.register({ ...registration, version: '1.0.1', pools: ['a', 'b'] });
        expect(await b.instance(instanceId)).toEqual({ version: '1.0.1', pools: ['a', 'b'] });
      });
    });

    describe('claim', () => {
      it('answers the task run with its attempt, fence and run token, and the server records the claim', async () => {
        const pool = newPool();
        const { executionId, taskRunIds } = await b.queue({ type: 'process', pool });
        const run = await claimOne(pool);
        expect(run).toMatchObject({
          taskRunId: taskRunIds[0],
          executionId,
          taskId: 't0',
          attempt: 1,
          executor: { type: 'process', pool },
        });
        expect(run.fence).toBeGreaterThan(0);
        expect(run.runToken).toEqual(expect.any(String));
        expect(run.runToken.length).toBeGreaterThan(0);
        expect(run.task).not.toHaveProperty('env');
        expect(await b.taskRun(run.taskRunId)).toMatchObject({
          state: 'STARTING',
          fence: run.fence,
          ownerId: INSTANCE,
        });
      });

      it('claims nothing for another pool or another executor type, and the task run stays queued', async () => {
        const pool = newPool();
        const { taskRunIds } = await b.queue({ type: 'process', pool });
        const claim = { instanceId: INSTANCE, limit: 10 };
        expect(await b.protocol.claim({ ...claim, executorTypes: ['process'], pools: [newPool()] })).toEqual(
          [],
        );
        expect(await b.protocol.claim({ ...claim, executorTypes: ['docker'], pools: [pool] })).toEqual([]);
        expect(await b.taskRun(taskRunIds[0]!)).toMatchObject({ state: 'QUEUED', ownerId: null });
      });

      it('claims at most `limit` task runs, and each task run once', async () => {
        const pool = newPool();
        const { taskRunIds } = await b.queue({ type: 'process', pool }, 3);
        const claim = { instanceId: INSTANCE, executorTypes: ['process' as const], pools: [pool] };
        const first = await b.protocol.claim({ ...claim, limit: 2 });
        const second = await b.protocol.claim({ ...claim, limit: 2 });
        const third = await b.protocol.claim({ ...claim, limit: 2 });
        expect([first.length, second.length, third.length]).toEqual([2, 1, 0]);
        const claimed = [...first, ...second].map((r) => r.taskRunId).sort();
        expect(claimed).toEqual([...taskRunIds].sort());
      });

      it('refuses a request the protocol does not accept, before claiming anything', async () => {
        const pool = newPool();
        const { taskRunIds } = await b.queue({ type: 'process', pool });
        await expect(
          b.protocol.claim({ instanceId: INSTANCE, executorTypes: ['process'], pools: [pool], limit: 0 }),
        ).rejects.toThrow(/limit/);
        expect(await b.taskRun(taskRunIds[0]!)).toMatchObject({ state: 'QUEUED', ownerId: null });
      });
    });

    describe('markStarted', () => {
      it("records the executor's external reference; a stale fence is refused", async () => {
        const { ref } = await queuedAndClaimed();
        await b.protocol.markStarted({ ...ref, externalRef: 'container-1' });
        expect((await b.taskRun(ref.taskRunId)).externalRef).toBe('container-1');
        await expectStale(b.protocol.markStarted({ ...ref, fence: ref.fence - 1, externalRef: 'zombie' }));
        expect((await b.taskRun(ref.taskRunId)).externalRef).toBe('container-1');
      });
    });

    describe('heartbeat', () => {
      it('answers cancel: false until a cancel is requested, then cancel: true', async () => {
        const { ref, executionId } = await queuedAndClaimed();
        expect(await b.protocol.heartbeat(ref)).toEqual({ cancel: false });
        expect(await b.protocol.cancelRequested([ref.taskRunId])).toEqual([]);
        await b.cancel(executionId);
        expect(await b.protocol.heartbeat(ref)).toEqual({ cancel: true });
        expect(await b.protocol.cancelRequested([ref.taskRunId, randomUUID(), 'not-a-uuid'])).toEqual([
          ref.taskRunId,
        ]);
      });

      it('refuses a malformed request with a rejected promise, never a throw, writing nothing', async () => {
        const { ref } = await queuedAndClaimed();
        let answer: Promise<unknown> = Promise.resolve();
        expect(() => {
          answer = b.protocol.heartbeat({ ...ref, fence: 1.5 });
        }).not.toThrow();
        await expect(answer).rejects.toThrow(/fence/);
        expect(await b.taskRun(ref.taskRunId)).toMatchObject({ state: 'STARTING', fence: ref.fence });
      });

      it('refuses a stale fence and a task run that has ended, with StaleFenceError', async () => {
        const { ref } = await queuedAndClaimed();
        await expectStale(b.protocol.heartbeat({ ...ref, fence: ref.fence - 1 }));
        await expectStale(b.protocol.heartbeat({ ...ref, fence: ref.fence + 1 }));
        await b.protocol.complete({ ...ref, state: 'SUCCEEDED', exitCode: 0 });
        await expectStale(b.protocol.heartbeat(ref));
      });
    });

    describe('reportLogs', () => {
      it('keeps the order of lines across batches; a resent seq is stored once, the first copy wins', async () => {
        const { ref } = await queuedAndClaimed();
        await b.protocol.reportLogs({
          ...ref,
          lines: [
            { seq: 1, stream: 'stdout', line: 'one', ts: ts() },
            { seq: 2, stream: 'stdout', line: 'two', ts: ts() },
          ],
        });
        await b.protocol.reportLogs({
          ...ref,
          lines: [
            { seq: 2, stream: 'stdout', line: 'two again', ts: ts() },
            { seq: 3, stream: 'stderr', line: 'three', ts: ts() },
          ],
        });
        expect(await b.logLines(ref.taskRunId)).toEqual([
          { seq: 1, stream: 'stdout', line: 'one' },
          { seq: 2, stream: 'stdout', line: 'two' },
          { seq: 3, stream: 'stderr', line: 'three' },
        ]);
      });

      it('takes the last lines after the completion, with the same fence, and refuses a stale fence', async () => {
        const { ref } = await queuedAndClaimed();
        await b.protocol.complete({ ...ref, state: 'SUCCEEDED', exitCode: 0 });
        await b.protocol.reportLogs({
          ...ref,
          lines: [{ seq: 1, stream: 'stdout', line: 'last', ts: ts() }],
        });
        await expectStale(
          b.protocol.reportLogs({
            ...ref,
            fence: ref.fence - 1,
            lines: [{ seq: 2, stream: 'stdout', line: 'zombie', ts: ts() }],
          }),
        );
        expect((await b.logLines(ref.taskRunId)).map((l) => l.line)).toEqual(['last']);
      });

      it('refuses a batch over the protocol limit, writing none of it', async () => {
        const { ref } = await queuedAndClaimed();
        const lines = Array.from({ length: 5001 }, (_, i) => ({
          seq: i + 1,
          stream: 'stdout' as const,
          line: `line ${i + 1}`,
          ts: ts(),
        }));
        await expect(b.protocol.reportLogs({ ...ref, lines })).rejects.toThrow(/5000/);
        expect(await b.logLines(ref.taskRunId)).toEqual([]);
      });
    });

    describe('complete', () => {
      it('ends the task run as SUCCEEDED; a repeat answers applied: false and changes nothing', async () => {
        const { ref } = await queuedAndClaimed();
        expect(await b.protocol.complete({ ...ref, state: 'SUCCEEDED', exitCode: 0 })).toEqual({
          applied: true,
          state: 'SUCCEEDED',
        });
        expect(
          await b.protocol.complete({ ...ref, state: 'FAILED', reason: 'exit_code', exitCode: 3 }),
        ).toEqual({ applied: false, state: 'SUCCEEDED' });
        expect(await b.taskRun(ref.taskRunId)).toMatchObject({
          state: 'SUCCEEDED',
          exitCode: 0,
          reason: null,
        });
      });

      it('ends the task run as FAILED with its reason, exit code and error', async () => {
        const { ref } = await queuedAndClaimed();
        const answer = await b.protocol.complete({
          ...ref,
          state: 'FAILED',
          reason: 'exit_code',
          exitCode: 3,
          error: 'exited with 3',
        });
        expect(answer).toEqual({ applied: true, state: 'FAILED' });
        expect(await b.taskRun(ref.taskRunId)).toMatchObject({
          state: 'FAILED',
          reason: 'exit_code',
          exitCode: 3,
          error: 'exited with 3',
        });
      });

      it('refuses a stale fence with StaleFenceError and leaves the task run to its holder', async () => {
        const { ref } = await queuedAndClaimed();
        await expectStale(
          b.protocol.complete({ ...ref, fence: ref.fence - 1, state: 'FAILED', reason: 'exit_code' }),
        );
        expect(await b.taskRun(ref.taskRunId)).toMatchObject({ state: 'STARTING', fence: ref.fence });
        expect(await b.protocol.complete({ ...ref, state: 'SUCCEEDED', exitCode: 0 })).toEqual({
          applied: true,
          state: 'SUCCEEDED',
        });
      });

      it('refuses a completion for a task run that does not exist', async () => {
        await expect(
          b.protocol.complete({ taskRunId: randomUUID(), fence: 1, state: 'SUCCEEDED' }),
        ).rejects.toThrow();
      });
    });

    describe('isStillRunning', () => {
      it('is true while the task run is active, false once it ended, and false for an id nobody has', async () => {
        const { ref } = await queuedAndClaimed();
        expect(await b.protocol.isStillRunning(ref.taskRunId)).toBe(true);
        await b.protocol.complete({ ...ref, state: 'CANCELLED', reason: 'cancelled' });
        expect(await b.protocol.isStillRunning(ref.taskRunId)).toBe(false);
        expect(await b.protocol.isStillRunning(randomUUID())).toBe(false);
        expect(await b.protocol.isStillRunning('not-a-uuid')).toBe(false);
      });
    });

    describe('waitForWork', () => {
      it('answers false after its timeout when nothing is queued', async () => {
        const started = Date.now();
        expect(await b.protocol.waitForWork(200)).toBe(false);
        expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      });

      it('answers true as soon as a task run is queued, well before its timeout', async () => {
        const started = Date.now();
        const waiting = b.protocol.waitForWork(20_000);
        // The long poll must be waiting before the work arrives (an HTTP poll needs a moment to reach the server).
        await new Promise((resolve) => setTimeout(resolve, 300));
        await b.queue({ type: 'process', pool: newPool() });
        expect(await waiting).toBe(true);
        expect(Date.now() - started).toBeLessThan(10_000);
      });
    });
  });
}
