import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { getTaskRun, readLogs } from '@sluice/store';
import { createInternalApp } from '@sluice/api';
import { getExecution, RunnerService } from '@sluice/engine';
import {
  EXECUTOR_API_PREFIX,
  ExecutorApiAuthError,
  ExecutorApiError,
  executorPaths,
  StaleFenceError,
} from '@sluice/protocol';
import { listen, putFlow, startApiHarness, WORKSPACE, type ApiHarness } from './harness';
import { EXECUTOR_TOKEN, executorClient, flowYaml, rawCall, stateOf, taskRunsOf } from './executor-helpers';

let h: ApiHarness;
let api: Awaited<ReturnType<typeof listen>>;
/** The same engine behind a server whose PIPELINE_EXECUTOR_API_TOKEN is empty. */
let disabled: Awaited<ReturnType<typeof listen>>;

beforeAll(async () => {
  h = await startApiHarness({ defaultRetryBackoffMs: 0 }, { executor: { apiToken: EXECUTOR_TOKEN } });
  api = await listen(h.internalApp);
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  disabled = await listen(
    createInternalApp({
      runner: new RunnerService(h.engine),
      artifactMaxBytes: 1024,
      log: quiet,
      executor: { engine: h.engine, apiToken: '', log: quiet },
    }),
  );
  expect((await putFlow(h, 'ns', 'auth', flowYaml('{ type: process, pool: auth }'))).status).toBe(200);
  expect((await putFlow(h, 'ns', 'main', flowYaml('{ type: process, pool: main }'))).status).toBe(200);
  expect((await putFlow(h, 'ns', 'child', flowYaml('{ type: process, pool: main }'))).status).toBe(200);
  const parent = ['tasks:', '  - id: sub', '    type: subflow', '    flow: child', '    wait: true'].join(
    '\n',
  );
  expect((await putFlow(h, 'ns', 'parent', parent)).status).toBe(200);
});
afterAll(async () => {
  await api?.close();
  await disabled?.close();
  await h?.close();
});

const claimBody = (pool: string) => ({
  instanceId: 'exec-1',
  executorTypes: ['process'],
  pools: [pool],
  limit: 5,
});
const instanceCount = async (id: string) =>
  Number((await h.pool.query('SELECT count(*) AS n FROM instances WHERE id = $1', [id])).rows[0].n);

describe('the internal secret', () => {
  it('a call without X-Internal-Secret is 401 with a JSON error and claims nothing', async () => {
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'auth' });
    const [run] = await taskRunsOf(h.pool, ex.id);
    const res = await rawCall(api.url, executorPaths.claim(), { body: claimBody('auth') });
    expect(res.status).toBe(401);
    expect(res.json.error?.code).toBe('unauthorized');
    expect(await stateOf(h.pool, run!.id)).toMatchObject({ state: 'QUEUED', ownerId: null });
    await h.engine.cancelExecution(ex.id);
  });

  it('a wrong secret is 401 before the body is read, and registers and claims nothing', async () => {
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'auth' });
    const [run] = await taskRunsOf(h.pool, ex.id);
    const wrong = 'not-the-token-at-all';
    const garbled = await rawCall(api.url, executorPaths.claim(), { secret: wrong, body: '{not json' });
    expect(garbled.status).toBe(401);
    expect(garbled.json.error?.code).toBe('unauthorized');
    expect(garbled.text).not.toContain(wrong);
    expect(garbled.text).not.toContain(EXECUTOR_TOKEN);

    const client = executorClient(api.url, wrong);
    const registration = {
      instanceId: 'intruder',
      type: 'docker-executor' as const,
      version: '1',
      capacity: {},
      pools: ['auth'],
      executors: ['process' as const],
    };
    const refused = await client.register(registration).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ExecutorApiAuthError);
    expect((refused as Error).message).toMatch(/EXECUTOR_API_TOKEN.*PIPELINE_EXECUTOR_API_TOKEN/);
    expect((refused as Error).message).not.toContain(wrong);
    await expect(client.claim({ ...claimBody('auth'), executorTypes: ['process'] })).rejects.toBeInstanceOf(
      ExecutorApiAuthError,
    );
    expect(await instanceCount('intruder')).toBe(0);
    expect(await stateOf(h.pool, run!.id)).toMatchObject({ state: 'QUEUED', ownerId: null });
    await h.engine.cancelExecution(ex.id);
  });

  it('a server with an empty PIPELINE_EXECUTOR_API_TOKEN refuses every call, even with the right secret', async () => {
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'auth' });
    const good = executorClient(api.url);
    const [claimed] = await good.claim({ ...claimBody('auth'), executorTypes: ['process'] });
    expect(claimed).toBeDefined();
    const before = await stateOf(h.pool, claimed!.taskRunId);

    const refused = executorClient(disabled.url);
    const ref = { taskRunId: claimed!.taskRunId, fence: claimed!.fence };
    await expect(
      refused.register({
        instanceId: 'disabled-1',
        type: 'k8s-executor',
        version: '1',
        capacity: {},
        pools: [],
        executors: ['kubernetes'],
      }),
    ).rejects.toBeInstanceOf(ExecutorApiAuthError);
    await expect(refused.complete({ ...ref, state: 'FAILED' })).rejects.toBeInstanceOf(ExecutorApiAuthError);
    await expect(refused.heartbeat(ref)).rejects.toBeInstanceOf(ExecutorApiAuthError);
    await expect(refused.waitForWork(10)).rejects.toBeInstanceOf(ExecutorApiAuthError);
    const emptySecret = await rawCall(disabled.url, executorPaths.claim(), {
      secret: '',
      body: claimBody('auth'),
    });
    expect(emptySecret.status).toBe(401);
    expect(emptySecret.json.error?.message).toMatch(/PIPELINE_EXECUTOR_API_TOKEN is not set/);

    expect(await instanceCount('disabled-1')).toBe(0);
    expect(await stateOf(h.pool, claimed!.taskRunId)).toEqual(before);
    expect(before.state).toBe('STARTING');
    await good.complete({ ...ref, state: 'CANCELLED', reason: 'cancelled' });
    await h.engine.cancelExecution(ex.id);
  });
});

describe('the executor protocol over HTTP', () => {
  it('register, claim, started, heartbeat and cancel, logs, complete, is-still-running', async () => {
    const client = executorClient(api.url);
    await client.register({
      instanceId: 'exec-1',
      type: 'docker-executor',
      version: '1.2.3',
      capacity: { docker: 5 },
      pools: ['main'],
      executors: ['process', 'inline'],
    });
    const instance = await h.pool.query('SELECT version, pools FROM instances WHERE id = $1', ['exec-1']);
    expect(instance.rows[0]).toEqual({ version: '1.2.3', pools: ['main'] });

    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'main' });
    const runs = await client.claim({ ...claimBody('main'), executorTypes: ['process'] });
    expect(runs.map((r) => [r.executionId, r.taskId])).toEqual([[ex.id, 't0']]);
    const run = runs[0]!;
    expect(await stateOf(h.pool, run.taskRunId)).toEqual({
      state: 'STARTING',
      fence: run.fence,
      ownerId: 'exec-1',
    });

    // The run token works on the runner API, for this task run.
    const spec = await fetch(`${api.url}/internal/v1/runner/task-runs/${run.taskRunId}/spec`, {
      headers: { authorization: `Bearer ${run.runToken}` },
    });
    expect(spec.status).toBe(200);
    expect(((await spec.json()) as { taskRunId: string }).taskRunId).toBe(run.taskRunId);

    const ref = { taskRunId: run.taskRunId, fence: run.fence };
    await client.markStarted({ ...ref, externalRef: 'container-3f9a' });
    expect((await getTaskRun(h.pool, run.taskRunId))?.externalRef).toBe('container-3f9a');

    expect(await client.heartbeat(ref)).toEqual({ cancel: false });
    expect(await client.cancelRequested([run.taskRunId])).toEqual([]);
    const cancel = await request(h.publicApp)
      .post(`/api/v1/executions/${ex.id}/cancel`)
      .set('Authorization', `Bearer ${h.adminToken}`);
    expect(cancel.status).toBeLessThan(300);
    expect(await client.heartbeat(ref)).toEqual({ cancel: true });
    expect(await client.cancelRequested([run.taskRunId, randomUUID(), 'not-a-uuid'])).toEqual([
      run.taskRunId,
    ]);

    const ts = new Date().toISOString();
    await client.reportLogs({
      ...ref,
      lines: [
        { seq: 1, stream: 'stdout', line: 'one', ts },
        { seq: 2, stream: 'stdout', line: 'two', ts },
      ],
    });
    // A resent batch (its answer was lost) adds only what is new.
    await client.reportLogs({
      ...ref,
      lines: [
        { seq: 2, stream: 'stdout', line: 'two again', ts },
        { seq: 3, stream: 'stderr', line: 'three', ts },
      ],
    });
    expect((await readLogs(h.pool, run.taskRunId)).map((l) => l.line)).toEqual(['one', 'two', 'three']);

    expect(await client.isStillRunning(run.taskRunId)).toBe(true);
    await expect(client.heartbeat({ ...ref, fence: run.fence - 1 })).rejects.toBeInstanceOf(StaleFenceError);

    const done = await client.complete({ ...ref, state: 'CANCELLED', reason: 'cancelled' });
    expect(done).toEqual({ applied: true, state: 'CANCELLED' });
    expect(await client.complete({ ...ref, state: 'CANCELLED', reason: 'cancelled' })).toEqual({
      applied: false,
      state: 'CANCELLED',
    });
    expect(await client.isStillRunning(run.taskRunId)).toBe(false);
    expect(await client.isStillRunning(randomUUID())).toBe(false);

    const unknown = await client
      .complete({ taskRunId: randomUUID(), fence: 1, state: 'SUCCEEDED' })
      .catch((e) => e);
    expect(unknown).toBeInstanceOf(ExecutorApiError);
    expect(unknown).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('answers 400 naming the field for a bad body, and for a body about another task run', async () => {
    const secret = EXECUTOR_TOKEN;
    const badLimit = await rawCall(api.url, executorPaths.claim(), {
      secret,
      body: { ...claimBody('main'), limit: 0 },
    });
    expect(badLimit.status).toBe(400);
    expect(badLimit.json.error?.message).toMatch(/limit/);
    const [a, b] = [randomUUID(), randomUUID()];
    const mismatch = await rawCall(api.url, executorPaths.heartbeat(a), {
      secret,
      body: { taskRunId: b, fence: 1 },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.error?.message).toMatch(/taskRunId/);
    const badWait = await rawCall(api.url, `${EXECUTOR_API_PREFIX}/wait-for-work?timeoutMs=soon`, {
      method: 'GET',
      secret,
    });
    expect(badWait.status).toBe(400);
    expect(badWait.json.error?.message).toMatch(/timeoutMs/);
  });

  it('a subflow task run starts its child execution once', async () => {
    const client = executorClient(api.url);
    const parent = await h.engine.createExecution({
      workspace: WORKSPACE,
      namespace: 'ns',
      flowId: 'parent',
    });
    const [run] = await client.claim({
      instanceId: 'exec-1',
      executorTypes: ['inline'],
      pools: [],
      limit: 5,
    });
    expect(run).toMatchObject({ executionId: parent.id, taskId: 'sub' });
    const req = { taskRunId: run!.taskRunId, fence: run!.fence, flow: 'child', wait: true };
    const { executionId } = await client.startSubflow(req);
    expect(await getExecution(h.pool, executionId)).toMatchObject({ flowId: 'child', namespace: 'ns' });
    expect(await client.startSubflow(req)).toEqual({ executionId });
    const children = await h.pool.query('SELECT id FROM executions WHERE parent_task_run_id = $1', [
      run!.taskRunId,
    ]);
    expect(children.rows).toEqual([{ id: executionId }]);
    await h.engine.cancelExecution(parent.id);
  });
});
