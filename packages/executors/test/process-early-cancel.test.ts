import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ProcessExecutor, type ExecutorContext, type ProcessExecutorOptions } from '../src';
import { InMemoryExecutorProtocol, claimedRun, eventually, recordingLogger } from '@sluice/testing';

/*
 * A cancel that stops a process runner before it has installed its TERM
 * handler (it is still loading, or still fetching its task): the TERM's
 * default action ends it, so it reports nothing. The executor's outcome must
 * say it stopped the runner for a cancel; the instance then ends the task run
 * CANCELLED / `cancelled` instead of FAILED, as the docker executor does for
 * a container stopped while its runner starts (packages/instance/test,
 * "ends a task run CANCELLED when the executor stopped it for a cancel").
 */

// A runner that never handles TERM. As a standby it first waits for its assignment on stdin.
const STARTING_RUNNER = `
const fs = require('node:fs');
const path = require('node:path');
const [dir] = process.argv.slice(2);
const starting = () => {
  fs.writeFileSync(path.join(dir, 'starting-' + process.pid), '');
  setInterval(() => undefined, 1000);
};
if (process.argv.includes('--standby')) {
  fs.writeFileSync(path.join(dir, 'standby-' + process.pid), '');
  process.stdin.once('data', starting);
} else {
  starting();
}
`;

// Far beyond the test's timeout: an outcome within it is the TERM's, never the group kill's.
const KILL_AFTER_MS = 60_000;

describe('ProcessExecutor: a cancel before the runner handles TERM', () => {
  let dir: string;
  let ctx: ExecutorContext;
  const executors: ProcessExecutor[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sluice-process-early-cancel-'));
    writeFileSync(path.join(dir, 'runner.cjs'), STARTING_RUNNER);
    ctx = {
      protocol: new InMemoryExecutorProtocol({ unknownTaskRuns: 'accept' }),
      runnerApiUrl: 'http://127.0.0.1:8081',
      log: recordingLogger(),
    };
  });
  afterEach(async () => {
    await Promise.all(executors.splice(0).map((executor) => executor.shutdown()));
    rmSync(dir, { recursive: true, force: true });
  });

  const executorFor = (options: Partial<ProcessExecutorOptions>) => {
    const executor = new ProcessExecutor({
      runnerCommand: [process.execPath, path.join(dir, 'runner.cjs'), dir],
      killAfterMs: KILL_AFTER_MS,
      ...options,
    });
    executors.push(executor);
    return executor;
  };
  const pidOf = (externalRef: string | null) => Number(externalRef?.slice('pid:'.length));
  const startingFile = (pid: number) => path.join(dir, `starting-${pid}`);

  it('marks a fresh runner it stopped while starting as cancelled', async () => {
    const executor = executorFor({ standbyRunners: 0 });
    const handle = await executor.start(claimedRun(), ctx);
    await eventually('the runner to be starting', () => existsSync(startingFile(pidOf(handle.externalRef))));

    await executor.cancel(handle);

    expect(await executor.wait(handle)).toEqual({ exitCode: null, signal: 'SIGTERM', cancelled: true });
    expect(await executor.status(handle)).toBe('exited');
  });

  it('marks a runner cancelled the moment it was spawned as cancelled', async () => {
    const executor = executorFor({ standbyRunners: 0 });
    const handle = await executor.start(claimedRun(), ctx);

    await executor.cancel(handle);

    expect(await executor.wait(handle)).toEqual({ exitCode: null, signal: 'SIGTERM', cancelled: true });
  });

  it('marks a standby it stopped right after handing it the task run as cancelled', async () => {
    const executor = executorFor({ standbyRunners: 1 });
    executor.prepare(ctx.log);
    await eventually('a standby runner', () => readdirSync(dir).some((f) => /^standby-\d+$/.test(f)));
    const handle = await executor.start(claimedRun(), ctx);
    expect(existsSync(path.join(dir, `standby-${pidOf(handle.externalRef)}`))).toBe(true);
    await eventually('the standby to be starting', () => existsSync(startingFile(pidOf(handle.externalRef))));

    await executor.cancel(handle);

    expect(await executor.wait(handle)).toEqual({ exitCode: null, signal: 'SIGTERM', cancelled: true });
  });

  it('does not mark a runner that a TERM from elsewhere ended: that task run fails', async () => {
    const executor = executorFor({ standbyRunners: 0 });
    const handle = await executor.start(claimedRun(), ctx);
    const pid = pidOf(handle.externalRef);
    await eventually('the runner to be starting', () => existsSync(startingFile(pid)));

    process.kill(pid, 'SIGTERM');

    expect(await executor.wait(handle)).toEqual({ exitCode: null, signal: 'SIGTERM' });
  });
});
