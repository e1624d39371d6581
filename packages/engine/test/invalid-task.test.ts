import { getExecution, RunnerService } from '@sluice/engine';
import { ResultRequest } from '@sluice/protocol';
import { getTaskRun, type TaskRunRow } from '@sluice/store';
import { startEngine, WORKSPACE, type EngineHarness } from './harness';

/*
 * A runner that refuses its task before starting it for a reason a retry
 * cannot change (a snapshot it must not extract) reports `reason:
 * invalid_task`: the task run ends FAILED with that reason and is not
 * retried, however many attempts are left.
 */

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngine({ defaultRetryBackoffMs: 0 });
});
afterAll(() => h.close());

/** What the runner API hands RunnerService after authenticating the run token. */
async function principalOf(id: string): Promise<{ taskRun: TaskRunRow; fence: number }> {
  const taskRun = await getTaskRun(h.pool, id);
  if (!taskRun) throw new Error(`no task run ${id}`);
  return { taskRun, fence: taskRun.fence };
}

const FLOW = 'retry: { max_attempts: 3 }\ntasks:\n  - id: a\n    type: command\n    command: ["true"]\n';

it('a result with reason invalid_task fails the task run once, without a retry', async () => {
  await h.storeFlow('refused', FLOW);
  const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'refused' });
  const [a] = await h.claimAll();
  const runner = new RunnerService(h.engine);
  const state = await runner.result(
    await principalOf(a!.id),
    ResultRequest.parse({
      fence: a!.fence,
      exitCode: null,
      error: 'snapshot: snapshot bundle refused: ../x: path escapes the work dir',
      reason: 'invalid_task',
    }),
  );
  await h.engine.processPendingEvents();

  expect(state).toBe('FAILED');
  expect(await h.claimAll()).toEqual([]);
  expect((await h.runsOf(ex.id)).map((r) => [r.attempt, r.state, r.reason, r.error])).toEqual([
    [1, 'FAILED', 'invalid_task', 'snapshot: snapshot bundle refused: ../x: path escapes the work dir'],
  ]);
  expect((await getExecution(h.pool, ex.id))?.state).toBe('FAILED');
});

it('the same result without the reason is an exit_code failure and is retried', async () => {
  await h.storeFlow('plain', FLOW);
  const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'plain' });
  const [a] = await h.claimAll();
  await new RunnerService(h.engine).result(
    await principalOf(a!.id),
    ResultRequest.parse({ fence: a!.fence, exitCode: null, error: 'snapshot: not available' }),
  );
  const [retry] = await h.claimAll();

  expect(retry).toMatchObject({ taskId: 'a', attempt: 2 });
  expect((await h.runsOf(ex.id)).map((r) => [r.attempt, r.state, r.reason])).toEqual([
    [1, 'FAILED', 'exit_code'],
    [2, 'STARTING', null],
  ]);
});
