import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ProcessExecutor, type ExecutorContext, type TaskRunHandle } from '../src';
import {
  InMemoryExecutorProtocol,
  claimedRun,
  eventually,
  recordingLogger,
  isProcessAlive,
} from '@sluice/testing';

const FAKE_RUNNER = path.join(__dirname, 'fake-runner.cjs');

describe('ProcessExecutor', () => {
  let dir: string;
  let log: ReturnType<typeof recordingLogger>;
  let ctx: ExecutorContext;
  const started: Array<{ executor: ProcessExecutor; handle: TaskRunHandle }> = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sluice-process-executor-'));
    log = recordingLogger();
    ctx = {
      protocol: new InMemoryExecutorProtocol({ unknownTaskRuns: 'accept' }),
      runnerApiUrl: 'http://127.0.0.1:8081',
      log,
    };
  });
  afterEach(async () => {
    // Leave no runner behind, even when a test failed half way.
    await Promise.all(started.splice(0).map(({ executor }) => executor.shutdown()));
    rmSync(dir, { recursive: true, force: true });
  });

  const readJson = <T>(name: string): T => JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as T;
  const executorFor = (mode: string, options: { env?: NodeJS.ProcessEnv; killAfterMs?: number } = {}) =>
    new ProcessExecutor({
      runnerCommand: [process.execPath, FAKE_RUNNER, mode, dir],
      ...options,
    });
  const startWith = async (executor: ProcessExecutor) => {
    const run = claimedRun();
    const handle = await executor.start(run, ctx);
    started.push({ executor, handle });
    return { run, handle };
  };

  it('passes the runner only the allowlisted server variables and the three runner variables', async () => {
    const executor = executorFor('env', {
      env: {
        PATH: process.env.PATH,
        HOME: '/home/sluice',
        TZ: 'Europe/Berlin',
        HTTPS_PROXY: 'http://proxy:3128',
        SLUICE_DATABASE_URL: 'postgres://sluice:secret@db/sluice',
        SLUICE_MASTER_KEYS: 'k1,k2',
        AUTH_JWT_SECRET: 'jwt-secret',
        NODE_OPTIONS: '--require /tmp/evil.js',
      },
    });
    const { run, handle } = await startWith(executor);
    const outcome = await executor.wait(handle);

    expect(outcome).toEqual({ exitCode: 0, signal: null });
    expect(handle.externalRef).toMatch(/^pid:\d+$/);
    const env = readJson<Record<string, string>>('env.json');
    const { SLUICE_API_URL, SLUICE_RUN_TOKEN, SLUICE_TASK_RUN_ID, ...passed } = env;
    expect({ SLUICE_API_URL, SLUICE_RUN_TOKEN, SLUICE_TASK_RUN_ID }).toEqual({
      SLUICE_API_URL: 'http://127.0.0.1:8081',
      SLUICE_RUN_TOKEN: run.runToken,
      SLUICE_TASK_RUN_ID: run.taskRunId,
    });
    expect(passed).toEqual({
      PATH: process.env.PATH,
      HOME: '/home/sluice',
      TZ: 'Europe/Berlin',
      HTTPS_PROXY: 'http://proxy:3128',
    });
  });

  it('runs the runner as the leader of its own process group and logs its diagnostics', async () => {
    const executor = executorFor('env', { env: { PATH: process.env.PATH } });
    const { run, handle } = await startWith(executor);
    await executor.wait(handle);

    const ids = readJson<{ pid: number; pgid: number }>('ids.json');
    expect(handle.externalRef).toBe(`pid:${ids.pid}`);
    expect(ids.pgid).toBe(ids.pid);
    await eventually('runner diagnostics in the instance log', () =>
      log.records.find(
        (r) => r.message.includes('fake runner diagnostics') && r.fields?.taskRunId === run.taskRunId,
      ),
    );
  });

  it('delivers SIGTERM to the runner on cancel', async () => {
    const executor = executorFor('trap');
    const { handle } = await startWith(executor);
    await eventually('runner ready', () => existsSync(path.join(dir, 'ready.json')));
    expect(await executor.status(handle)).toBe('running');

    await executor.cancel(handle);
    const outcome = await executor.wait(handle);

    expect(readJson<string>('signal.json')).toBe('SIGTERM');
    // Marked as stopped for a cancel: should the runner have reported nothing, the instance ends it CANCELLED.
    expect(outcome).toEqual({ exitCode: 143, signal: null, cancelled: true });
    expect(await executor.status(handle)).toBe('exited');
  });

  it('reports a cancel that killed the runner before it had a SIGTERM handler as cancelled', async () => {
    const executor = executorFor('plain');
    const { handle } = await startWith(executor);
    await eventually('runner ready', () => existsSync(path.join(dir, 'ready.json')));

    await executor.cancel(handle);
    // The instance ends it CANCELLED / cancelled on this (instance.test.ts), as on docker.
    expect(await executor.wait(handle)).toEqual({ exitCode: null, signal: 'SIGTERM', cancelled: true });
  });

  it('kills a runner that ignores SIGTERM, with its whole group, on shutdown', async () => {
    const executor = executorFor('stubborn', { killAfterMs: 300 });
    const { handle } = await startWith(executor);
    const { helperPid } = await eventually('runner ready', () =>
      existsSync(path.join(dir, 'ready.json')) ? readJson<{ helperPid: number }>('ready.json') : undefined,
    );
    const outcome = executor.wait(handle);

    await executor.shutdown();

    expect(await outcome).toEqual({ exitCode: null, signal: 'SIGKILL' });
    expect(readJson<string>('signal.json')).toBe('SIGTERM (ignored)');
    await eventually('the helper in the runner group to be gone', () => !isProcessAlive(helperPid));
    await expect(executor.start(claimedRun(), ctx)).rejects.toThrow(/shut down/);
  });

  it('rejects start with the command named when the runner cannot be started', async () => {
    const executor = new ProcessExecutor({
      runnerCommand: [path.join(dir, 'no-such-runner')],
    });
    await expect(executor.start(claimedRun(), ctx)).rejects.toThrow(
      /could not start the runner .*no-such-runner/,
    );
  });

  it('reports the exit of a runner it never started only when the pid is gone', async () => {
    const executor = executorFor('env');
    const gone: TaskRunHandle = {
      taskRunId: 'elsewhere',
      fence: 1,
      externalRef: 'pid:2147483646',
    };
    expect(await executor.status(gone)).toBe('exited');
    expect(await executor.status({ ...gone, externalRef: `pid:${process.pid}` })).toBe('unknown');
    expect(await executor.status({ ...gone, externalRef: null })).toBe('unknown');
  });
});
