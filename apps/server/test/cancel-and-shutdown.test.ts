import { mkdtempSync, readFileSync, existsSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { createTestDatabase, eventually, type TestDatabase } from '@sluice/testing';
import { adminToken, apiClient, ended, startStandalone, type StandaloneServer } from './standalone';

let db: TestDatabase;
let server: StandaloneServer | undefined;
let marks: string;

beforeAll(async () => {
  db = await createTestDatabase();
  marks = mkdtempSync(join(tmpdir(), 'sluice-marks-'));
  chmodSync(marks, 0o777);
});
afterAll(async () => {
  await server?.stop('SIGKILL');
  await db?.drop();
});

const processAlive = (pattern: string): boolean => {
  try {
    execFileSync('pgrep', ['-f', pattern]);
    return true;
  } catch {
    return false;
  }
};

const waitUntil = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) =>
  eventually(what, check, timeoutMs, 100);

describe('cancel', () => {
  it('SIGTERMs the whole process group, gives a TERM-trapping task its 10 s grace, and ends CANCELLED', async () => {
    server = await startStandalone(db.url);
    const api = apiClient(server.publicUrl, await adminToken());
    // group: a shell with a background child; both write a mark when TERM reaches them.
    // stubborn: ignores TERM, so only SIGKILL after the grace stops it.
    const flow = `
tasks:
  - id: group
    type: command
    command: ["sh", "-c", "(trap 'echo child > ${marks}/child-term; exit 0' TERM; sleep 300 & wait) & trap 'echo parent > ${marks}/parent-term; exit 0' TERM; echo ready; sleep 300 & wait"]
  - id: stubborn
    type: command
    command: ["sh", "-c", "trap 'echo term-ignored >> ${marks}/stubborn-term' TERM; echo ready; while true; do sleep 0.2; done"]
`;
    expect((await api.putFlow('demo', 'sleepy', flow)).status).toBe(200);
    const id = await api.run('demo', 'sleepy');
    const running = await api.waitFor(
      id,
      (e) => e.taskRuns?.length === 2 && e.taskRuns.every((r) => r.state === 'RUNNING'),
    );
    // Both printed "ready": their traps are installed.
    for (const run of running.taskRuns) {
      await waitUntil('ready line', async () => (await api.logs(run.id)).some((l) => l.line === 'ready'));
    }

    const cancelledAt = Date.now();
    const cancel = await api.call('POST', `/api/v1/executions/${id}/cancel`);
    expect(cancel.status).toBe(202);

    await waitUntil(
      'TERM in the group',
      () => existsSync(join(marks, 'parent-term')) && existsSync(join(marks, 'child-term')),
    );
    expect(readFileSync(join(marks, 'child-term'), 'utf8').trim()).toBe('child');

    const done = await api.waitFor(id, ended, 40_000);
    const endedAfterMs = Date.now() - cancelledAt;
    expect(done.state).toBe('CANCELLED');
    for (const run of done.taskRuns) expect(run).toMatchObject({ state: 'CANCELLED', reason: 'cancelled' });
    // The stubborn task saw TERM, kept running through the grace, and was killed only after it.
    expect(readFileSync(join(marks, 'stubborn-term'), 'utf8')).toContain('term-ignored');
    expect(endedAfterMs).toBeGreaterThanOrEqual(10_000);
    const stubborn = done.taskRuns.find((r) => r.taskId === 'stubborn')!;
    const system = (await api.logs(stubborn.id))
      .filter((l) => l.stream === 'system')
      .map((l) => l.line)
      .join('\n');
    expect(system).toMatch(/SIGKILL/);
    expect(processAlive(`${marks}/stubborn-term`)).toBe(false);
    await server.stop();
    server = undefined;
  });
});

describe('instance shutdown', () => {
  const env = { PIPELINE_HEARTBEAT_TIMEOUT: '3s' };

  /** A flow whose first attempt sleeps (marked by `sleep <seconds>`) and whose retry succeeds; waits until it runs. */
  async function startSleepingTask(flowId: string, seconds: number) {
    server = await startStandalone(db.url, env);
    const api = apiClient(server.publicUrl, await adminToken());
    const flow = `
retry: { max_attempts: 2, backoff: 1s }
tasks:
  - id: long
    type: command
    command: ["sh", "-c", "if [ \\"$SLUICE_ATTEMPT\\" = 1 ]; then echo first; exec sleep ${seconds}; fi; echo second-attempt"]
`;
    expect((await api.putFlow('demo', flowId, flow)).status).toBe(200);
    const id = await api.run('demo', flowId);
    const running = await api.waitFor(id, (e) => e.taskRuns?.[0]?.state === 'RUNNING');
    await waitUntil('first line', async () =>
      (await api.logs(running.taskRuns[0]!.id)).some((l) => l.line === 'first'),
    );
    return id;
  }

  /** Restarts the server and expects attempt 1 to have ended with `reason`, and attempt 2 to succeed. */
  async function expectRetriedAfterRestart(id: string, reason: string) {
    server = await startStandalone(db.url, env);
    const api = apiClient(server.publicUrl, await adminToken());
    const done = await api.waitFor(id, ended, 30_000);
    expect(done.state).toBe('SUCCEEDED');
    expect(done.taskRuns.map((r) => [r.attempt, r.state, r.reason])).toEqual([
      [1, 'FAILED', reason],
      [2, 'SUCCEEDED', null],
    ]);
    expect((await api.logs(done.taskRuns[1]!.id)).map((l) => l.line)).toContain('second-attempt');
    // One server per test: the next test's server must not share this database with a live one.
    await server!.stop();
    server = undefined;
  }

  it('SIGTERM to the server fails a running process task with instance_shutdown; its retry runs after the next start', async () => {
    const id = await startSleepingTask('long', 301);
    expect(await server!.stop('SIGTERM')).toBe(0);
    server = undefined;
    expect(processAlive('sleep 301')).toBe(false);
    await expectRetriedAfterRestart(id, 'instance_shutdown');
  });

  it('kill -9 of the server: its runners stop their tasks, and after a restart the task run fails lost and is retried', async () => {
    const id = await startSleepingTask('crash', 302);
    await server!.stop('SIGKILL');
    server = undefined;
    // The runner saw its instance die (its stdin pipe closed) and stopped the task.
    await waitUntil('the orphaned task to stop', () => !processAlive('sleep 302'), 20_000);
    await expectRetriedAfterRestart(id, 'lost');
  });
});
