import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeRunnerAssignment, type RunnerTaskSpec } from '@sluice/protocol';
import { isProcessAlive } from '@sluice/testing';
import { warmUp } from '../src/warm-up';
import { FakeRunnerApi, taskSpec } from './support/fake-runner-api';

const SUPPORT = join(__dirname, 'support');
const RUNNER = ['-r', join(SUPPORT, 'ts-register.cjs'), join(SUPPORT, 'exec-child.ts'), 'exec'];

let dir: string;
const apis: FakeRunnerApi[] = [];
const children: ChildProcessWithoutNullStreams[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'runner-standby-'));
});

afterEach(async () => {
  children.splice(0).forEach((child) => child.exitCode === null && child.kill('SIGKILL'));
  for (const api of apis.splice(0)) {
    await api.stop();
    expect(api.problems).toEqual([]);
  }
  await rm(dir, { recursive: true, force: true });
});

async function fakeApi(spec: Partial<RunnerTaskSpec>): Promise<FakeRunnerApi> {
  const api = await new FakeRunnerApi(taskSpec(spec)).start();
  apis.push(api);
  return api;
}

interface Runner {
  child: ChildProcessWithoutNullStreams;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** The runner from source in a child process, stdin a pipe held open as the process executor holds it. */
function startRunner(args: string[], env: Record<string, string | undefined>): Runner {
  const child = spawn(process.execPath, [...RUNNER, ...args], {
    // What the process executor passes on (RUNNER_ENV_ALLOWLIST), plus where the run directory goes.
    env: { PATH: process.env.PATH, HOME: '/home/sluice', TZ: 'Europe/Berlin', TMPDIR: dir, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, exited };
}

const freshRunner = (api: FakeRunnerApi): Runner =>
  startRunner([], {
    SLUICE_API_URL: api.url,
    SLUICE_RUN_TOKEN: api.token,
    SLUICE_TASK_RUN_ID: api.spec.taskRunId,
  });
const standbyRunner = (): Runner => startRunner(['--standby'], {});
const assign = (runner: Runner, api: FakeRunnerApi): void =>
  void runner.child.stdin.write(
    encodeRunnerAssignment({ apiUrl: api.url, runToken: api.token, taskRunId: api.spec.taskRunId }),
  );

/** Prints its output, the variables it got (run directories aside), writes an output and exits 3. */
const TASK = `
  echo to-stdout; echo to-stderr >&2
  env | sort | grep -v -e '^SLUICE_OUTPUTS=' -e '^SLUICE_ARTIFACTS=' -e '^SLUICE_METRICS=' \\
    -e '^SLUICE_WORK_DIR=' -e '^PWD=' -e '^OLDPWD=' | sed 's/^/var /'
  echo rows=42 >> "$SLUICE_OUTPUTS"
  exit 3
`;

/** A shell whose background subshell writes $MARK when SIGTERM reaches it: proof the whole group got it. */
const GROUP_TASK = `
  trap 'echo got-term; exit 0' TERM
  ( trap 'echo grandchild > "$MARK"; exit 0' TERM; echo grandchild-ready; sleep 300 & wait ) &
  echo ready
  sleep 300 & wait
`;

/** What the server kept of a task run, with what differs between any two runs (pids) left out. */
function record(api: FakeRunnerApi) {
  return {
    // Per stream: the order between stdout and stderr is the pipes', not the runner's.
    stdout: api.text('stdout'),
    stderr: api.text('stderr'),
    system: api.text('system').map((line) => line.replace(/\(pid \d+\)/, '(pid N)')),
    outputs: api.outputs,
    result: api.result,
    started: typeof api.startedPid,
  };
}

const taskReady = (api: FakeRunnerApi) =>
  api.waitFor('the task to be ready', () =>
    ['ready', 'grandchild-ready'].every((l) => api.text('stdout').includes(l)),
  );

test('a standby runs its assigned task run exactly as a runner started with the variables', async () => {
  const fresh = await fakeApi({ task: { type: 'command', command: ['sh', '-c', TASK] }, env: { A: 'b' } });
  const viaStandby = await fakeApi({
    task: { type: 'command', command: ['sh', '-c', TASK] },
    env: { A: 'b' },
  });

  const first = freshRunner(fresh);
  expect(await first.exited).toBe(3);

  const standby = standbyRunner();
  // Waiting or working, the runner's environment never holds the run variables.
  const environ = readFileSync(`/proc/${standby.child.pid}/environ`, 'utf8');
  for (const name of ['SLUICE_RUN_TOKEN', 'SLUICE_API_URL', 'SLUICE_TASK_RUN_ID']) {
    expect(environ).not.toContain(`${name}=`);
  }
  assign(standby, viaStandby);
  expect(await standby.exited).toBe(3);

  expect(record(viaStandby)).toEqual(record(fresh));
  expect(viaStandby.text('stdout')).toEqual(
    expect.arrayContaining(['to-stdout', 'var A=b', 'var HOME=/home/sluice', 'var TZ=Europe/Berlin']),
  );
  expect(viaStandby.text('stderr')).toEqual(['to-stderr']);
  expect(viaStandby.outputs).toEqual({ rows: '42' });
  expect(viaStandby.result).toMatchObject({ exitCode: 3, error: 'exit code 3' });
  expect(standby.stderr()).toBe(first.stderr());
});

test('a standby whose executor goes away before assigning it exits 0 quietly', async () => {
  const standby = standbyRunner();
  standby.child.stdin.end();
  expect(await standby.exited).toBe(0);
  expect(standby.stderr()).toBe('');
});

test('an assigned standby whose executor goes away stops its task and posts no result', async () => {
  const mark = join(dir, 'grandchild-got-term');
  const api = await fakeApi({
    task: { type: 'command', command: ['sh', '-c', GROUP_TASK] },
    env: { MARK: mark },
  });
  const standby = standbyRunner();
  assign(standby, api);
  await taskReady(api);

  standby.child.stdin.end();

  expect(await standby.exited).toBe(1);
  expect(api.result).toBeNull();
  expect(await readFile(mark, 'utf8')).toBe('grandchild\n');
  expect(standby.stderr()).toContain('the instance that started this runner is gone');
});

test('the executor killed with -9 takes its waiting standby and the runners it started along', async () => {
  const marks = [join(dir, 'mark-fresh'), join(dir, 'mark-standby')];
  const apis = await Promise.all(
    marks.map((mark, i) =>
      fakeApi({
        taskRunId: `tr-${i}`,
        task: { type: 'command', command: ['sh', '-c', GROUP_TASK] },
        env: { MARK: mark },
      }),
    ),
  );
  const runs = apis.map((api) => ({ apiUrl: api.url, taskRunId: api.spec.taskRunId, runToken: api.token }));
  const executor = spawn(
    process.execPath,
    ['-r', join(SUPPORT, 'ts-register.cjs'), join(SUPPORT, 'executor-child.cjs'), JSON.stringify(runs)],
    { env: { PATH: process.env.PATH, TMPDIR: dir }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const pids = await new Promise<{ runners: number[]; standby: number[] }>((resolve, reject) => {
    let out = '';
    executor.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(JSON.parse(out));
    });
    executor.on('exit', (code) =>
      reject(new Error(`the executor exited with ${code} before it started the runs`)),
    );
  });
  expect(pids.runners).toHaveLength(2);
  expect(pids.standby).toHaveLength(1);
  await Promise.all(apis.map(taskReady));
  const all = [...pids.runners, ...pids.standby];
  expect(all.filter(isProcessAlive)).toEqual(all);

  executor.kill('SIGKILL');

  await apis[0]!.waitFor('every runner and the standby to exit', () =>
    all.every((pid) => !isProcessAlive(pid)),
  );
  for (const [i, api] of apis.entries()) {
    expect(api.result).toBeNull();
    expect(existsSync(marks[i]!)).toBe(true);
  }
});

test('an assignment that is not valid is refused with exit 2, naming the fields and not the token', async () => {
  const standby = standbyRunner();
  standby.child.stdin.write('{"apiUrl":"ftp://sluice","runToken":"tok-3c9e-secret","taskRunId":""}\n');
  expect(await standby.exited).toBe(2);
  expect(standby.stderr()).toMatch(/apiUrl: must be an http\(s\) URL; taskRunId: must not be empty/);
  expect(standby.stderr()).not.toContain('tok-3c9e-secret');

  const notJson = standbyRunner();
  notJson.child.stdin.write('tok-3c9e-secret\n');
  expect(await notJson.exited).toBe(2);
  expect(notJson.stderr()).toBe('sluice exec --standby: the assignment is not JSON\n');
});

test('a standby refuses to start with run variables in its environment', async () => {
  const runner = startRunner(['--standby'], { SLUICE_RUN_TOKEN: 'tok-3c9e-secret' });
  expect(await runner.exited).toBe(2);
  expect(runner.stderr()).toContain('SLUICE_RUN_TOKEN must not be set');
  expect(runner.stderr()).not.toContain('tok-3c9e-secret');
});

test('the warm-up of a standby goes through, so its first task run does not pay for it', async () => {
  expect(await warmUp()).toBe(true);
});
