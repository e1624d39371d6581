import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ProcessExecutor, type ExecutorContext, type ProcessExecutorOptions } from '../src';
import { InMemoryExecutorProtocol, claimedRun, eventually, recordingLogger } from '@sluice/testing';

const FAKE_RUNNER = path.join(__dirname, 'fake-runner.cjs');
const RUN_VARIABLES = ['SLUICE_API_URL', 'SLUICE_RUN_TOKEN', 'SLUICE_TASK_RUN_ID'];

describe('ProcessExecutor standby runners', () => {
  let dir: string;
  let log: ReturnType<typeof recordingLogger>;
  let ctx: ExecutorContext;
  const executors: ProcessExecutor[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sluice-process-standby-'));
    log = recordingLogger();
    ctx = {
      protocol: new InMemoryExecutorProtocol({ unknownTaskRuns: 'accept' }),
      runnerApiUrl: 'http://127.0.0.1:8081',
      log,
    };
  });
  afterEach(async () => {
    // Leave no runner and no standby behind, even when a test failed half way.
    await Promise.all(executors.splice(0).map((executor) => executor.shutdown()));
    rmSync(dir, { recursive: true, force: true });
  });

  const readJson = <T>(name: string): T => JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as T;
  const executorFor = (mode: string, options: Partial<ProcessExecutorOptions> = {}) => {
    const executor = new ProcessExecutor({
      runnerCommand: [process.execPath, FAKE_RUNNER, mode, dir],
      ...options,
    });
    executors.push(executor);
    return executor;
  };
  const startWith = async (executor: ProcessExecutor) => {
    const run = claimedRun();
    const handle = await executor.start(run, ctx);
    return { run, handle, pid: Number(handle.externalRef?.slice('pid:'.length)) };
  };
  /** Standbys of this test still waiting: `--standby` children of this process, minus those handed a task run. */
  const waitingStandbys = (...assigned: number[]): number[] =>
    childrenOfThisProcess()
      .filter((child) => child.argv.includes('--standby') && child.argv.includes(dir))
      .map((child) => child.pid)
      .filter((pid) => !assigned.includes(pid));
  const standbyWrote = (): number[] =>
    readdirSync(dir)
      .map((name) => /^standby-(\d+)\.json$/.exec(name)?.[1])
      .filter((pid): pid is string => pid !== undefined)
      .map(Number);

  it('hands the next claim to a standby, which has no run variables and gets them over stdin', async () => {
    const serverEnv = {
      PATH: process.env.PATH,
      HOME: '/home/sluice',
      TZ: 'Europe/Berlin',
      HTTPS_PROXY: 'http://proxy:3128',
      SLUICE_DATABASE_URL: 'postgres://sluice:secret@db/sluice',
      AUTH_JWT_SECRET: 'jwt-secret',
      NODE_OPTIONS: '--require /tmp/evil.js',
    };
    const executor = executorFor('env', { env: serverEnv });

    // The first claim starts a runner as it always did, and a standby for the next one.
    const first = await startWith(executor);
    expect(await executor.wait(first.handle)).toEqual({ exitCode: 0, signal: null });
    const freshEnv = readJson<Record<string, string>>('env.json');
    expect(freshEnv.SLUICE_RUN_TOKEN).toBe(first.run.runToken);
    const allowlisted = withoutRunVariables(freshEnv);
    const [standbyPid] = await eventually('a standby runner', () => {
      const pids = standbyWrote();
      return pids.length > 0 ? pids : undefined;
    });

    // Waiting, the standby holds the allowlisted variables exactly, and no run variable.
    expect(environOf(standbyPid!)).toEqual(allowlisted);

    const second = await startWith(executor);
    expect(second.pid).toBe(standbyPid);
    expect(await executor.wait(second.handle)).toEqual({ exitCode: 0, signal: null });
    expect(readJson(`assignment-${standbyPid}.json`)).toEqual({
      apiUrl: 'http://127.0.0.1:8081',
      runToken: second.run.runToken,
      taskRunId: second.run.taskRunId,
    });
    expect(readJson<Record<string, string>>('env.json')).toEqual(allowlisted);
    // Its diagnostics after the assignment are the task run's, as a fresh runner's are.
    await eventually('the standby diagnostics under the task run', () =>
      log.records.find(
        (r) => r.message.includes('fake runner diagnostics') && r.fields?.taskRunId === second.run.taskRunId,
      ),
    );
    expect(JSON.stringify(log.records)).not.toContain(second.run.runToken);
  });

  it('prepare starts the standbys before any claim, so the first claim takes one too', async () => {
    const executor = executorFor('env', { standbyRunners: 2 });
    expect(waitingStandbys()).toEqual([]); // built, not prepared: nothing started yet
    executor.prepare(log);
    const ready = await eventually('two standby runners loaded', () => {
      const pids = standbyWrote();
      return pids.length === 2 ? pids : undefined;
    });

    const first = await startWith(executor);
    expect(ready).toContain(first.pid);
    expect(await executor.wait(first.handle)).toEqual({ exitCode: 0, signal: null });
    expect(readJson(`assignment-${first.pid}.json`)).toMatchObject({ runToken: first.run.runToken });
  });

  it('cancels a runner that came from a standby as it cancels a fresh one', async () => {
    const executor = executorFor('trap');
    const first = await startWith(executor);
    await eventually('the fresh runner ready', () => existsSync(path.join(dir, 'ready.json')));
    await executor.cancel(first.handle);
    expect(await executor.wait(first.handle)).toEqual({ exitCode: 143, signal: null, cancelled: true });
    rmSync(path.join(dir, 'ready.json'));
    rmSync(path.join(dir, 'signal.json'));

    const [standbyPid] = await eventually('a standby runner', () => {
      const pids = standbyWrote();
      return pids.length > 0 ? pids : undefined;
    });
    const second = await startWith(executor);
    expect(second.pid).toBe(standbyPid);
    await eventually('the standby runner ready', () => existsSync(path.join(dir, 'ready.json')));
    expect(await executor.status(second.handle)).toBe('running');

    await executor.cancel(second.handle);

    expect(await executor.wait(second.handle)).toEqual({ exitCode: 143, signal: null, cancelled: true });
    expect(readJson<string>('signal.json')).toBe('SIGTERM');
    expect(await executor.status(second.handle)).toBe('exited');
  });

  it('replaces a standby that died before its assignment; claims still run meanwhile', async () => {
    const executor = executorFor('env', { standbyRestartDelayMs: 300 });
    const first = await startWith(executor);
    await executor.wait(first.handle);
    const [dead] = waitingStandbys();
    expect(dead).toBeDefined();

    process.kill(dead!, 'SIGKILL');
    await eventually('the death reported', () =>
      log.records.find((r) => r.message.includes('standby runner exited before') && r.fields?.pid === dead),
    );
    const second = await startWith(executor);
    expect(second.pid).not.toBe(dead);
    expect(await executor.wait(second.handle)).toEqual({ exitCode: 0, signal: null });

    const [replacement] = await eventually('a replacement standby', () => {
      const pids = waitingStandbys(second.pid);
      return pids.length > 0 ? pids : undefined;
    });
    const third = await startWith(executor);
    expect(third.pid).toBe(replacement);
    expect(await executor.wait(third.handle)).toEqual({ exitCode: 0, signal: null });
    expect(readJson(`assignment-${replacement}.json`)).toMatchObject({ taskRunId: third.run.taskRunId });
  });

  it('replaces a runner that dies at every start ever more slowly', async () => {
    const executor = executorFor('crash-standby', { standbyRestartDelayMs: 50 });
    const first = await startWith(executor);
    expect(await executor.wait(first.handle)).toEqual({ exitCode: 0, signal: null });

    const delays = await eventually('three standby deaths', () => {
      const seen = log.records
        .filter((r) => r.message.includes('standby runner exited before'))
        .map((r) => r.fields?.restartInMs);
      return seen.length >= 3 ? seen.slice(0, 3) : undefined;
    });

    expect(delays).toEqual([50, 100, 200]);
    // Its own words reach the instance log, tagged as a standby's.
    expect(
      log.records.some((r) => r.message === 'fake runner: broken standby' && r.fields?.standbyRunner),
    ).toBe(true);
  });

  it('starts every runner fresh and keeps none waiting when standbys are turned off', async () => {
    const executor = executorFor('env', { standbyRunners: 0 });
    for (let i = 0; i < 2; i += 1) {
      const { run, handle } = await startWith(executor);
      expect(waitingStandbys()).toEqual([]);
      expect(await executor.wait(handle)).toEqual({ exitCode: 0, signal: null });
      expect(readJson<Record<string, string>>('env.json').SLUICE_RUN_TOKEN).toBe(run.runToken);
    }
    expect(standbyWrote()).toEqual([]);
  });

  it('holds no more standbys than the slots its runners leave free', async () => {
    const executor = executorFor('trap', { standbyRunners: 5, slots: 2 });
    const first = await startWith(executor);
    // Standbys are spawned before start() resolves: what is there now is all there is.
    const [standby] = waitingStandbys();
    expect(waitingStandbys()).toHaveLength(1);

    const second = await startWith(executor);
    expect(second.pid).toBe(standby);
    expect(waitingStandbys(second.pid)).toEqual([]);

    await executor.cancel(first.handle);
    await executor.wait(first.handle);
    await eventually('a standby in the freed slot', () => waitingStandbys(second.pid).length === 1);
  });

  it('kills and reaps every standby on shutdown', async () => {
    const executor = executorFor('env', { standbyRunners: 2 });
    const { handle } = await startWith(executor);
    await executor.wait(handle);
    const standbys = waitingStandbys();
    expect(standbys).toHaveLength(2);

    await executor.shutdown();

    // Reaped, not just dead: no /proc entry, not even a zombie.
    expect(standbys.filter((pid) => existsSync(`/proc/${pid}`))).toEqual([]);
    expect(waitingStandbys()).toEqual([]);
    await expect(executor.start(claimedRun(), ctx)).rejects.toThrow(/shut down/);
  });
});

/** Live children of this process, with their argv. */
function childrenOfThisProcess(): Array<{ pid: number; argv: string[] }> {
  const children: Array<{ pid: number; argv: string[] }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces, so split after ')'.
      const [state, ppid] = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      if (Number(ppid) !== process.pid || state === 'Z') continue;
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      children.push({ pid: Number(entry), argv });
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** The environment a process was started with, as the kernel keeps it. */
function environOf(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)) {
    const eq = entry.indexOf('=');
    env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

function withoutRunVariables(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !RUN_VARIABLES.includes(name)));
}
