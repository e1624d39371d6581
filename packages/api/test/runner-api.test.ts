import request from 'supertest';
import { createRunToken } from '@sluice/auth';
import { getTaskRun, listTaskRunsOfExecution } from '@sluice/store';
import {
  startApiHarness,
  putFlow,
  putSecret,
  claimWithToken,
  runnerPath,
  JWT_SECRET,
  WORKSPACE,
  type ApiHarness,
} from './harness';

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness({ defaultRetryBackoffMs: 0 });
  const flow = [
    'retry: { max_attempts: 2 }',
    'tasks:',
    '  - id: a',
    '    type: command',
    '    command: ["true"]',
    '    env: { TOKEN: { secret: api-token }, PLAIN: "x" }',
    '  - id: b',
    '    type: command',
    '    command: ["true"]',
  ].join('\n');
  expect((await putFlow(h, 'ns', 'two', flow)).status).toBe(200);
  expect((await putSecret(h, 'ns', 'api-token', 'the-secret-value-123')).status).toBe(204);
});
afterAll(() => h.close());

describe('runner API tokens', () => {
  it("task run A's token cannot read task run B; an expired or revoked token is 401", async () => {
    await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'two' });
    const claimed = await claimWithToken(h);
    expect(claimed).toHaveLength(2);
    const [a, b] = claimed as [(typeof claimed)[0], (typeof claimed)[0]];

    const own = await request(h.internalApp)
      .get(runnerPath(a.row.id, 'spec'))
      .set('Authorization', `Bearer ${a.token}`);
    expect(own.status).toBe(200);
    expect(own.body.taskRunId).toBe(a.row.id);

    const cross = await request(h.internalApp)
      .get(runnerPath(b.row.id, 'spec'))
      .set('Authorization', `Bearer ${a.token}`);
    expect(cross.status).toBe(401);

    const expired = await createRunToken(
      JWT_SECRET,
      { taskRunId: a.row.id, fence: a.row.fence },
      1000,
      new Date(Date.now() - 3_600_000),
    );
    const late = await request(h.internalApp)
      .get(runnerPath(a.row.id, 'spec'))
      .set('Authorization', `Bearer ${expired}`);
    expect(late.status).toBe(401);
    expect(late.body.error.message).toMatch(/expired/);

    // Ending the task run revokes its token.
    const done = await request(h.internalApp)
      .post(runnerPath(b.row.id, 'result'))
      .set('Authorization', `Bearer ${b.token}`)
      .send({ fence: b.row.fence, exitCode: 0 });
    expect(done.status).toBe(200);
    const revoked = await request(h.internalApp)
      .get(runnerPath(b.row.id, 'spec'))
      .set('Authorization', `Bearer ${b.token}`);
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.message).toMatch(/revoked/);
  });
});

describe('secrets', () => {
  it('reach only the runner spec, never the stored task run or the public API', async () => {
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'two' });
    const claimed = await claimWithToken(h);
    const a = claimed.find((c) => c.row.taskId === 'a')!;
    const spec = await request(h.internalApp)
      .get(runnerPath(a.row.id, 'spec'))
      .set('Authorization', `Bearer ${a.token}`);
    expect(spec.body.env).toEqual({ TOKEN: 'the-secret-value-123', PLAIN: 'x' });

    const stored = await h.pool.query('SELECT spec::text AS spec FROM task_runs WHERE execution_id = $1', [
      ex.id,
    ]);
    for (const row of stored.rows) expect(row.spec).not.toContain('the-secret-value-123');
    const raw = await h.pool.query(
      "SELECT count(*)::int AS n FROM secrets WHERE position(convert_to($1, 'UTF8') in ciphertext) > 0",
      ['the-secret'],
    );
    expect(raw.rows[0].n).toBe(0);

    const view = await request(h.publicApp)
      .get(`/api/v1/executions/${ex.id}`)
      .set('Authorization', `Bearer ${h.adminToken}`);
    expect(JSON.stringify(view.body)).not.toContain('the-secret-value-123');
    const list = await request(h.publicApp)
      .get('/api/v1/namespaces/ns/secrets')
      .set('Authorization', `Bearer ${h.adminToken}`);
    expect(list.body.secrets).toEqual([expect.objectContaining({ name: 'api-token' })]);
    expect(JSON.stringify(list.body)).not.toContain('the-secret-value-123');
    expect(h.logs.join('\n')).not.toContain('the-secret-value-123');
  });

  it('a missing secret fails the task run with a message naming it', async () => {
    await request(h.publicApp)
      .delete('/api/v1/namespaces/ns/secrets/api-token')
      .set('Authorization', `Bearer ${h.adminToken}`)
      .expect(204);
    await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'two' });
    const a = (await claimWithToken(h)).find((c) => c.row.taskId === 'a')!;
    const spec = await request(h.internalApp)
      .get(runnerPath(a.row.id, 'spec'))
      .set('Authorization', `Bearer ${a.token}`);
    expect(spec.status).toBe(422);
    const row = await getTaskRun(h.pool, a.row.id);
    expect(row).toMatchObject({ state: 'FAILED', reason: 'error' });
    expect(row?.error).toMatch(/secret "api-token" is not set/);
  });

  it('members cannot write secrets', async () => {
    const res = await request(h.publicApp)
      .put('/api/v1/namespaces/ns/secrets/x')
      .set('Authorization', `Bearer ${h.memberToken}`)
      .send({ value: 'v' });
    expect(res.status).toBe(403);
  });
});

describe('watchdog and fencing', () => {
  it('fails a silent task run as lost, retries it as attempt 2, and refuses the zombie with 409', async () => {
    const ex = await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'two' });
    const claimed = await claimWithToken(h);
    const b = claimed.find((c) => c.row.taskId === 'b')!;
    // Its heartbeats stopped a minute ago.
    await h.pool.query(`UPDATE task_runs SET heartbeat_at = now() - interval '1 minute' WHERE id = $1`, [
      b.row.id,
    ]);
    expect(await h.engine.sweepLostTaskRuns(30_000)).toBe(1);
    await h.engine.processPendingEvents(); // what sluice jobs (or a standalone server) does next

    const runs = (await listTaskRunsOfExecution(h.pool, ex.id)).filter((r) => r.taskId === 'b');
    expect(runs.map((r) => [r.attempt, r.state, r.reason])).toEqual([
      [1, 'FAILED', 'lost'],
      [2, 'QUEUED', null],
    ]);

    const zombie = await request(h.internalApp)
      .post(runnerPath(b.row.id, 'result'))
      .set('Authorization', `Bearer ${b.token}`)
      .send({ fence: b.row.fence, exitCode: 0 });
    expect(zombie.status).toBe(409);
    expect(zombie.body.error.code).toBe('stale_fence');
    const after = await getTaskRun(h.pool, b.row.id);
    expect(after).toMatchObject({ state: 'FAILED', reason: 'lost', exitCode: null });
    const logs = await request(h.internalApp)
      .post(runnerPath(b.row.id, 'logs'))
      .set('Authorization', `Bearer ${b.token}`)
      .send({
        fence: b.row.fence,
        lines: [{ seq: 1, stream: 'stdout', line: 'late', ts: new Date().toISOString() }],
      });
    expect(logs.status).toBe(409);
    const stored = await h.pool.query('SELECT count(*)::int AS n FROM task_run_logs WHERE task_run_id = $1', [
      b.row.id,
    ]);
    expect(stored.rows[0].n).toBe(0);
  });
});
