import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ProcessExecutor, type ExecutorContext, type ProcessExecutorOptions, type RunnerUser } from '../src';
import { InMemoryExecutorProtocol, claimedRun, eventually, recordingLogger } from '@sluice/testing';

const FAKE_RUNNER = path.join(__dirname, 'fake-runner.cjs');
const NOBODY: RunnerUser = { uid: 65534, gid: 65534, name: 'nobody' };

interface WhoAmI {
  uid: number;
  gid: number;
  groups: number[];
  cwd: string;
  env: Record<string, string>;
  tmpdir: string;
  secret: string;
}

/** Switching users needs root; elsewhere there is nothing to switch. */
const asRoot = process.getuid?.() === 0 ? describe : describe.skip;

asRoot('ProcessExecutor on a root instance: runners run as the task user', () => {
  let dir: string;
  let secretFile: string;
  let ctx: ExecutorContext;
  const executors: ProcessExecutor[] = [];

  beforeEach(() => {
    // The fake runner reports into `out`, which the task user may write; the secret sits
    // in a 0700 directory of root's, as SLUICE_DATA_DIR does.
    dir = mkdtempSync(path.join(tmpdir(), 'sluice-task-user-'));
    chmodSync(dir, 0o755);
    mkdirSync(path.join(dir, 'out'));
    chownSync(path.join(dir, 'out'), NOBODY.uid, NOBODY.gid);
    mkdirSync(path.join(dir, 'data'), { mode: 0o700 });
    secretFile = path.join(dir, 'data', 'secrets.json');
    writeFileSync(secretFile, '{"authJwtSecret":"root-only"}', { mode: 0o600 });
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
      runnerCommand: [process.execPath, FAKE_RUNNER, 'whoami', path.join(dir, 'out'), secretFile],
      env: { PATH: process.env.PATH, HOME: '/root', SLUICE_DATABASE_URL: 'postgres://x:pw@db/x' },
      taskUser: NOBODY,
      ...options,
    });
    executors.push(executor);
    return executor;
  };
  const whoami = (pid: number): WhoAmI =>
    JSON.parse(readFileSync(path.join(dir, 'out', `whoami-${pid}.json`), 'utf8')) as WhoAmI;
  const uidOf = (pid: number): number =>
    Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

  it('starts a fresh runner as the user, without root groups, in a 0700 home it owns, out of reach of root files', async () => {
    const executor = executorFor({ standbyRunners: 0 });
    const handle = await executor.start(claimedRun(), ctx);
    const pid = Number(handle.externalRef?.slice('pid:'.length));
    expect(await executor.wait(handle)).toEqual({ exitCode: 0, signal: null });
    const seen = whoami(pid);
    expect(seen).toMatchObject({ uid: 65534, gid: 65534, groups: [65534], secret: 'EACCES' });
    // HOME, TMPDIR and cwd are one fresh directory, not the server's HOME.
    expect(seen.env.HOME).not.toBe('/root');
    expect(seen.env.TMPDIR).toBe(seen.env.HOME);
    expect(seen.cwd).toBe(seen.env.HOME);
    expect(seen.tmpdir).toBe(seen.env.HOME);
    expect(seen.env.SLUICE_DATABASE_URL).toBeUndefined();
    // Removed once the runner exited.
    await eventually('the runner home removed', () => !existsSync(seen.env.HOME!) || undefined);
  });

  it('gives the home to the user with mode 0700 while the runner lives, and standbys run as the user too', async () => {
    const executor = executorFor({ standbyRunners: 1 });
    executor.prepare(ctx.log);
    const standbyPid = await eventually('a standby runner as nobody', () => {
      const out = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim();
      const pid = out
        .split(/\s+/)
        .map(Number)
        .find((p) => p > 0 && existsSync(`/proc/${p}`));
      return pid !== undefined && uidOf(pid) === NOBODY.uid ? pid : undefined;
    });
    const home = readFileSync(`/proc/${standbyPid}/environ`, 'utf8')
      .split('\0')
      .find((v) => v.startsWith('HOME='))
      ?.slice('HOME='.length);
    const stat = statSync(home!);
    expect({ uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o777 }).toEqual({
      uid: 65534,
      gid: 65534,
      mode: 0o700,
    });

    const handle = await executor.start(claimedRun(), ctx);
    expect(handle.externalRef).toBe(`pid:${standbyPid}`);
    expect(await executor.wait(handle)).toEqual({ exitCode: 0, signal: null });
    expect(whoami(standbyPid)).toMatchObject({ uid: 65534, groups: [65534], secret: 'EACCES' });
  });

  it('refuses, at construction, a runner the user cannot read, naming the variable and the directory', () => {
    const hidden = path.join(dir, 'data', 'sluice.cjs');
    writeFileSync(hidden, '', { mode: 0o644 });
    expect(
      () => new ProcessExecutor({ runnerCommand: [process.execPath, hidden, 'exec'], taskUser: NOBODY }),
    ).toThrow(
      `process tasks run as nobody (SLUICE_PROCESS_TASK_USER), who cannot enter ${path.join(dir, 'data')}`,
    );
  });
});
