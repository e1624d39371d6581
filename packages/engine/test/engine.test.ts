import { getExecution } from '@sluice/engine';
import { claimTaskRuns, setOutputs } from '@sluice/store';
import { startEngine, succeed, WORKSPACE, type EngineHarness } from './harness';

let h: EngineHarness;
beforeAll(async () => {
  h = await startEngine({ defaultRetryBackoffMs: 0 });
});
afterAll(() => h.close());

const DAG = `
tasks:
  - id: fetch
    type: command
    command: ["true"]
  - id: left
    type: command
    command: ["echo", "{{ outputs.fetch.rows }}"]
    depends_on: [fetch]
  - id: right
    type: command
    command: ["true"]
    depends_on: [fetch]
  - id: join
    type: http
    request: { url: "http://127.0.0.1:1/x", body: { rows: "{{ outputs.fetch.rows }}" } }
    depends_on: [left, right]
`;

describe('execution engine', () => {
  it('runs a DAG: dependents queue when their dependencies succeed, templates are rendered, the execution succeeds', async () => {
    await h.storeFlow('dag', DAG);
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'dag' });
    expect(ex.state).toBe('RUNNING');
    expect(ex.snapshotId).toMatch(/^[0-9a-f]{64}$/);

    const [fetch] = await h.claimAll();
    expect(fetch?.taskId).toBe('fetch');
    await setOutputs(h.pool, { taskRunId: fetch!.id, fence: fetch!.fence, outputs: { rows: '42' } });
    await succeed(h, fetch!);

    const second = await h.claimAll();
    expect(second.map((r) => r.taskId).sort()).toEqual(['left', 'right']);
    const left = second.find((r) => r.taskId === 'left')!;
    expect(left.spec.command).toEqual(['echo', '42']);
    await succeed(h, left);
    expect(await h.claimAll()).toEqual([]); // join still waits for right
    await succeed(
      h,
      second.find((r) => r.taskId === 'right')!,
    );

    const [join] = await h.claimAll();
    expect(join).toMatchObject({ taskId: 'join', executorType: 'inline', pool: '' });
    expect((join!.spec.request as { body: unknown }).body).toEqual({ rows: '42' });
    await succeed(h, join!);
    expect((await getExecution(h.pool, ex.id))?.state).toBe('SUCCEEDED');
  });

  it('a completion repeated by its holder changes nothing the second time', async () => {
    await h.storeFlow('one', 'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n');
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'one' });
    const [a] = await h.claimAll();
    expect((await succeed(h, a!)).applied).toBe(true);
    expect((await succeed(h, a!)).applied).toBe(false);
    expect(await h.runsOf(ex.id)).toHaveLength(1);
  });

  it('retries a failed task while attempts are left, then fails the execution without starting dependents', async () => {
    await h.storeFlow(
      'retry',
      'retry: { max_attempts: 2 }\ntasks:\n  - id: a\n    type: command\n    command: ["false"]\n  - id: b\n    type: command\n    command: ["true"]\n    depends_on: [a]\n',
    );
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'retry' });
    const [a1] = await h.claimAll();
    await succeed(h, a1!, 3);
    const [a2] = await h.claimAll();
    expect(a2).toMatchObject({ taskId: 'a', attempt: 2 });
    await succeed(h, a2!, 3);
    expect(await h.claimAll()).toEqual([]);
    const final = await getExecution(h.pool, ex.id);
    expect(final?.state).toBe('FAILED');
    expect((await h.runsOf(ex.id)).map((r) => [r.taskId, r.attempt, r.state, r.reason])).toEqual([
      ['a', 1, 'FAILED', 'exit_code'],
      ['a', 2, 'FAILED', 'exit_code'],
    ]);
  });

  it('holds a retry back for its backoff', async () => {
    const slow = await startEngine({ defaultRetryBackoffMs: 60_000 });
    try {
      await slow.storeFlow(
        'r',
        'retry: { max_attempts: 3, backoff: 60s }\ntasks:\n  - id: a\n    type: command\n    command: ["false"]\n',
      );
      const ex = await slow.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'r' });
      const [a1] = await slow.claimAll();
      await succeed(slow, a1!, 1);
      expect(await slow.claimAll()).toEqual([]);
      const retry = (await slow.runsOf(ex.id)).find((r) => r.attempt === 2)!;
      expect(retry.availableAt.getTime() - Date.now()).toBeGreaterThan(50_000);
    } finally {
      await slow.close();
    }
  });

  it('max_parallel caps the active task runs of one execution before the claim', async () => {
    const tasks = ['a', 'b', 'c', 'd']
      .map((id) => `  - id: ${id}\n    type: command\n    command: ["true"]\n`)
      .join('');
    await h.storeFlow('wide', `max_parallel: 2\ntasks:\n${tasks}`);
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'wide' });
    const first = await h.claimAll();
    expect(first).toHaveLength(2);
    await succeed(h, first[0]!);
    const next = await h.claimAll();
    expect(next).toHaveLength(1);
    for (const r of [first[1]!, next[0]!]) await succeed(h, r);
    const last = await h.claimAll();
    expect(last).toHaveLength(1);
    await succeed(h, last[0]!);
    expect((await getExecution(h.pool, ex.id))?.state).toBe('SUCCEEDED');
  });

  it('concurrency holds further executions of a flow QUEUED until one ends', async () => {
    await h.storeFlow(
      'solo',
      'concurrency: 1\ntasks:\n  - id: a\n    type: command\n    command: ["true"]\n',
    );
    const first = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'solo' });
    const second = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'solo' });
    expect(first.state).toBe('RUNNING');
    expect(second.state).toBe('QUEUED');
    const [a] = await h.claimAll();
    expect(a?.executionId).toBe(first.id);
    await succeed(h, a!);
    expect((await getExecution(h.pool, second.id))?.state).toBe('RUNNING');
    const [b] = await h.claimAll();
    expect(b?.executionId).toBe(second.id);
    await succeed(h, b!);
  });

  it('cancel ends queued task runs at once and the execution when its active ones stop', async () => {
    await h.storeFlow(
      'two',
      'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n  - id: b\n    type: command\n    command: ["true"]\n',
    );
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'two' });
    // Claim only a: b stays queued, so the cancel ends it at once, and a is asked to stop.
    const [a] = await claimTaskRuns(h.pool, {
      ownerId: 't',
      executorTypes: ['process'],
      pools: ['default'],
      limit: 1,
    });
    const after = await h.engine.cancelExecution(ex.id);
    expect(after.state).toBe('RUNNING');
    const runs = await h.runsOf(ex.id);
    expect(runs.find((r) => r.id === a!.id)?.cancelRequested).toBe(true);
    expect(runs.find((r) => r.id !== a!.id)).toMatchObject({ state: 'CANCELLED', reason: 'cancelled' });
    await h.engine.finishTaskRun({
      taskRunId: a!.id,
      fence: a!.fence,
      state: 'CANCELLED',
      reason: 'cancelled',
    });
    await h.engine.processPendingEvents();
    expect((await getExecution(h.pool, ex.id))?.state).toBe('CANCELLED');
  });

  it('a template that cannot be rendered fails its task run with the reason', async () => {
    await h.storeFlow(
      'tmpl',
      'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n  - id: b\n    type: command\n    command: ["echo", "{{ outputs.a.missing }}"]\n    depends_on: [a]\n',
    );
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'tmpl' });
    const [a] = await h.claimAll();
    await succeed(h, a!);
    const b = (await h.runsOf(ex.id)).find((r) => r.taskId === 'b');
    expect(b).toMatchObject({ state: 'FAILED', reason: 'error' });
    expect(b?.error).toMatch(/missing/);
    expect((await getExecution(h.pool, ex.id))?.state).toBe('FAILED');
  });

  it('pins identical namespace content as one snapshot', async () => {
    await h.storeFlow('snap', 'tasks:\n  - id: a\n    type: command\n    command: ["true"]\n');
    const one = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'snap' });
    const two = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'snap' });
    expect(one.snapshotId).toBe(two.snapshotId);
    await h.pool.query(
      `INSERT INTO namespace_files (workspace, namespace, path, content, sha256) VALUES ($1, 'ns', 'data.csv', 'x', 'x')`,
      [WORKSPACE],
    );
    const three = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'snap' });
    expect(three.snapshotId).not.toBe(one.snapshotId);
  });
});
