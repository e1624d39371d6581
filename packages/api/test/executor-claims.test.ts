import { setTimeout as sleep } from 'node:timers/promises';
import { databaseNow, deleteExpiredBatch } from '@sluice/store';
import { executorPaths, IDEMPOTENCY_KEY_HEADER, type ClaimedTaskRun } from '@sluice/protocol';
import { listen, putFlow, startApiHarness, WORKSPACE, type ApiHarness } from './harness';
import { EXECUTOR_TOKEN, executorClient, flowYaml, rawCall, stateOf, taskRunsOf } from './executor-helpers';

const K8S_MAX_JOBS = 3;

let h: ApiHarness;
let api: Awaited<ReturnType<typeof listen>>;

beforeAll(async () => {
  h = await startApiHarness({}, { executor: { apiToken: EXECUTOR_TOKEN, k8sMaxJobs: K8S_MAX_JOBS } });
  api = await listen(h.internalApp);
  expect((await putFlow(h, 'ns', 'pair', flowYaml('{ type: process, pool: idem }', 2))).status).toBe(200);
  expect((await putFlow(h, 'ns', 'wake', flowYaml('{ type: process, pool: wake }'))).status).toBe(200);
  const k8s = flowYaml('{ type: kubernetes, image: "alpine:3", pool: kube }', 4);
  expect((await putFlow(h, 'ns', 'k8s', k8s)).status).toBe(200);
});
afterAll(async () => {
  h?.engine.workSignal.close(); // long polls whose client hung up still wait on it
  await api?.close();
  await h?.close();
});

const claimWithKey = async (key: string, body: object) => {
  const res = await rawCall(api.url, executorPaths.claim(), {
    secret: EXECUTOR_TOKEN,
    headers: { [IDEMPOTENCY_KEY_HEADER]: key },
    body,
  });
  expect(res.status).toBe(200);
  return (res.json as unknown as { taskRuns: ClaimedTaskRun[] }).taskRuns;
};

const activeKubernetesRuns = async () =>
  Number(
    (
      await h.pool.query(
        `SELECT count(*) AS n FROM task_runs
         WHERE executor_type = 'kubernetes' AND pool = 'kube' AND state IN ('STARTING', 'RUNNING')`,
      )
    ).rows[0].n,
  );

describe('idempotent claims', () => {
  it('a claim repeated with its Idempotency-Key returns the same task runs and claims nothing more', async () => {
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'pair' });
    const body = { instanceId: 'exec-1', executorTypes: ['process'], pools: ['idem'], limit: 1 };
    const first = await claimWithKey('key-1', body);
    expect(first).toHaveLength(1);
    const again = await claimWithKey('key-1', body);
    expect(again.map((r) => [r.taskRunId, r.fence])).toEqual(first.map((r) => [r.taskRunId, r.fence]));
    // The replay's run token is fresh and valid on the runner API.
    const spec = await fetch(`${api.url}/internal/v1/runner/task-runs/${again[0]!.taskRunId}/spec`, {
      headers: { authorization: `Bearer ${again[0]!.runToken}` },
    });
    expect(spec.status).toBe(200);
    const states = (await taskRunsOf(h.pool, ex.id)).map((r) => r.state).sort();
    expect(states).toEqual(['QUEUED', 'STARTING']);

    // Another instance's claim with the same key is its own claim.
    const other = await claimWithKey('key-1', { ...body, instanceId: 'exec-2' });
    expect(other).toHaveLength(1);
    expect(other[0]!.taskRunId).not.toBe(first[0]!.taskRunId);

    // Retention deletes claim records (executorClaims) older than its cutoff; both are older than now.
    expect(await deleteExpiredBatch(h.pool, 'executorClaims', await databaseNow(h.pool), 5000)).toBe(2);
    await h.engine.cancelExecution(ex.id);
  });

  it('twins with one key at once (a retry while the first call still runs) get the same task runs', async () => {
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'pair' });
    const body = { instanceId: 'exec-1', executorTypes: ['process'], pools: ['idem'], limit: 1 };
    const [a, b] = await Promise.all([claimWithKey('twin-key', body), claimWithKey('twin-key', body)]);
    expect(a).toHaveLength(1);
    expect(b!.map((r) => [r.taskRunId, r.fence])).toEqual(a!.map((r) => [r.taskRunId, r.fence]));
    const states = (await taskRunsOf(h.pool, ex.id)).map((r) => r.state).sort();
    expect(states).toEqual(['QUEUED', 'STARTING']);
    await h.engine.cancelExecution(ex.id);
  });

  it('a claim that found nothing leaves no record: its key claims again', async () => {
    const body = { instanceId: 'exec-1', executorTypes: ['process'], pools: ['idem'], limit: 1 };
    expect(await claimWithKey('empty-key', body)).toEqual([]);
    const records = await h.pool.query("SELECT 1 FROM executor_claims WHERE idempotency_key = 'empty-key'");
    expect(records.rowCount).toBe(0);
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'pair' });
    expect(await claimWithKey('empty-key', body)).toHaveLength(1);
    await h.engine.cancelExecution(ex.id);
  });

  it('the client retries a claim whose answer was lost with the same key, and gets the same task runs', async () => {
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'pair' });
    const keys: string[] = [];
    let dropped = false;
    // The first claim reaches the server and is applied, but its answer is lost on the way back.
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (String(input).endsWith(executorPaths.claim())) {
        keys.push(new Headers(init?.headers).get(IDEMPOTENCY_KEY_HEADER) ?? '');
        if (!dropped) {
          dropped = true;
          await res.arrayBuffer();
          return new Response('upstream reset', { status: 503 });
        }
      }
      return res;
    };
    const client = executorClient(api.url, EXECUTOR_TOKEN, lossy);
    const runs = await client.claim({
      instanceId: 'exec-1',
      executorTypes: ['process'],
      pools: ['idem'],
      limit: 1,
    });
    expect(runs).toHaveLength(1);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    const states = await taskRunsOf(h.pool, ex.id);
    expect(states.filter((r) => r.state === 'STARTING').map((r) => r.id)).toEqual([runs[0]!.taskRunId]);
    expect(states.filter((r) => r.state === 'QUEUED')).toHaveLength(1);

    // The next logical claim has a key of its own and takes the other task run.
    const next = await client.claim({
      instanceId: 'exec-1',
      executorTypes: ['process'],
      pools: ['idem'],
      limit: 1,
    });
    expect(next).toHaveLength(1);
    expect(keys[2]).not.toBe(keys[0]);
    await h.engine.cancelExecution(ex.id);
  });
});

describe('wait-for-work', () => {
  it('answers true when task runs are queued meanwhile, and false after its timeout', async () => {
    const client = executorClient(api.url);
    expect(await client.waitForWork(200)).toBe(false);

    let answer: boolean | undefined;
    const waiting = client.waitForWork(20_000).then((queued) => (answer = queued));
    const created: string[] = [];
    // Queue work until the long poll answers: the first execution may come before the poll reached the server.
    while (answer === undefined && created.length < 20) {
      created.push(
        (await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'wake' })).id,
      );
      await Promise.race([waiting, sleep(250)]);
    }
    expect(answer).toBe(true);
    for (const id of created) await h.engine.cancelExecution(id);
  });

  it('a client that hangs up ends its long poll quietly', async () => {
    const client = executorClient(api.url);
    const waiting = client.waitForWork(20_000);
    await sleep(100);
    client.close();
    expect(await waiting).toBe(false);
    await sleep(100);
    expect(h.logs.filter((l) => l.startsWith('request failed'))).toEqual([]);
  });
});

describe('the kubernetes per-pool limit', () => {
  it(`holds under concurrent claims from two instances (SLUICE_K8S_MAX_JOBS=${K8S_MAX_JOBS})`, async () => {
    const executions = [];
    for (let i = 0; i < 3; i++)
      executions.push(
        await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'k8s' }),
      );
    const total = 12;
    const seen = new Set<string>();
    const samples: number[] = [];

    const loop = async (instanceId: string) => {
      const client = executorClient(api.url);
      for (let round = 0; round < 200 && seen.size < total; round++) {
        const runs = await client.claim({
          instanceId,
          executorTypes: ['kubernetes'],
          pools: ['kube'],
          limit: 5,
        });
        samples.push(await activeKubernetesRuns());
        for (const run of runs) {
          expect(seen.has(run.taskRunId)).toBe(false);
          seen.add(run.taskRunId);
        }
        await sleep(runs.length === 0 ? 20 : 5);
        // Jobs end: room frees up for the next claims.
        for (const run of runs) {
          await client.complete({
            taskRunId: run.taskRunId,
            fence: run.fence,
            state: 'SUCCEEDED',
            exitCode: 0,
          });
        }
      }
    };
    await Promise.all([loop('k8s-a'), loop('k8s-b')]);

    expect(seen.size).toBe(total);
    expect(Math.max(...samples)).toBe(K8S_MAX_JOBS);
  });

  it('a repeated claim in a limited pool returns the same task runs', async () => {
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'k8s' });
    const body = { instanceId: 'k8s-a', executorTypes: ['kubernetes'], pools: ['kube'], limit: 2 };
    const first = await claimWithKey('kube-key', body);
    expect(first).toHaveLength(2);
    const again = await claimWithKey('kube-key', body);
    expect(again.map((r) => r.taskRunId)).toEqual(first.map((r) => r.taskRunId));
    expect(await activeKubernetesRuns()).toBe(2);
    for (const run of first) expect(await stateOf(h.pool, run.taskRunId)).toMatchObject({ ownerId: 'k8s-a' });
    await h.engine.cancelExecution(ex.id);
  });
});
