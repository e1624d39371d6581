import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunnerTaskSpec } from '@sluice/protocol';
import { runTask } from '@sluice/runner';
import { FakeRunnerApi, taskSpec } from './support/fake-runner-api';

let api: FakeRunnerApi;
let dir: string;
let runnerLog: string[];

beforeEach(async () => {
  api = await new FakeRunnerApi(taskSpec()).start();
  dir = await mkdtemp(join(tmpdir(), 'runner-stop-'));
  runnerLog = [];
});

afterEach(async () => {
  await api.stop();
  await rm(dir, { recursive: true, force: true });
  expect(api.problems).toEqual([]);
});

function run(spec: Partial<RunnerTaskSpec>) {
  api.spec = taskSpec(spec);
  return runTask({
    apiUrl: api.url,
    runToken: api.token,
    taskRunId: api.spec.taskRunId,
    workRoot: dir,
    env: { PATH: process.env.PATH },
    handleSignals: false,
    log: (message) => runnerLog.push(message),
  });
}

/** A shell whose background subshell writes $MARK when SIGTERM reaches it: proof the whole group got it. */
const GROUP_TASK = `
  trap 'echo got-term; exit 0' TERM
  ( trap 'echo grandchild > "$MARK"; exit 0' TERM; echo grandchild-ready; sleep 300 & wait ) &
  echo ready
  sleep 300 & wait
`;

test('a cancel from the heartbeat sends SIGTERM to the whole process group', async () => {
  const mark = join(dir, 'grandchild-got-term');
  const done = run({ task: { type: 'command', command: ['sh', '-c', GROUP_TASK] }, env: { MARK: mark } });
  await api.waitFor('the task to be ready', () =>
    ['ready', 'grandchild-ready'].every((l) => api.text('stdout').includes(l)),
  );

  api.cancel = true;
  const { exitCode } = await done;

  expect(exitCode).toBe(0);
  expect(api.result).toMatchObject({ exitCode: 0, stoppedBy: 'cancel', error: 'cancelled' });
  expect(api.text('stdout')).toContain('got-term');
  expect(api.text('system')).toContain("cancel requested; sending SIGTERM to the task's process group");
  expect(await readFile(mark, 'utf8')).toBe('grandchild\n');
});

test('a task that ignores SIGTERM is killed after the grace period', async () => {
  const done = run({
    task: { type: 'command', command: ['sh', '-c', 'trap "" TERM; echo ready; while :; do sleep 1; done'] },
    cancelGraceMs: 500,
  });
  await api.waitFor('the task to be ready', () => api.text('stdout').includes('ready'));

  api.cancel = true;
  const { exitCode } = await done;

  expect(exitCode).toBe(137);
  expect(api.result).toMatchObject({
    exitCode: 137,
    stoppedBy: 'cancel',
    error: 'cancelled; killed by SIGKILL',
  });
  expect(api.text('system')).toContain(
    "still running 500 ms after SIGTERM; sent SIGKILL to the task's process group",
  );
});

test('the task timeout stops the task and is reported as such', async () => {
  const { exitCode } = await run({ task: { type: 'command', command: ['sleep', '30'] }, timeoutMs: 300 });

  expect(exitCode).toBe(143);
  expect(api.result).toMatchObject({
    exitCode: 143,
    stoppedBy: 'timeout',
    error: 'timed out after 300 ms; killed by SIGTERM',
  });
  expect(api.text('system')).toContain(
    "timeout of 300 ms reached; sending SIGTERM to the task's process group",
  );
});

test('a stale fence on heartbeat stops the task and posts no result', async () => {
  const mark = join(dir, 'grandchild-got-term');
  const done = run({ task: { type: 'command', command: ['sh', '-c', GROUP_TASK] }, env: { MARK: mark } });
  await api.waitFor('the task to be ready', () =>
    ['ready', 'grandchild-ready'].every((l) => api.text('stdout').includes(l)),
  );

  api.staleFence = true;
  const { exitCode } = await done;

  expect(exitCode).not.toBe(0);
  expect(api.result).toBeNull();
  expect(existsSync(mark)).toBe(true);
  expect(runnerLog.join('\n')).toMatch(/is no longer ours .*stale.*\n.*exiting without a result/);
});

test('SIGTERM to the runner process cancels the task and still posts the result', async () => {
  const mark = join(dir, 'grandchild-got-term');
  // The task first lists the names of the SLUICE_ variables it sees.
  const listNames = `env | sed -n 's/^\\(SLUICE_[A-Z_]*\\)=.*/var \\1/p'`;
  api.spec = taskSpec({
    task: { type: 'command', command: ['sh', '-c', listNames + GROUP_TASK] },
    env: { MARK: mark },
  });
  const runner = spawn(
    process.execPath,
    ['-r', join(__dirname, 'support', 'ts-register.cjs'), join(__dirname, 'support', 'runner-child.ts')],
    {
      env: {
        PATH: process.env.PATH,
        SLUICE_API_URL: api.url,
        SLUICE_RUN_TOKEN: api.token,
        SLUICE_TASK_RUN_ID: api.spec.taskRunId,
        SLUICE_DATABASE_URL: 'postgres://must-not-leak@db/sluice',
        TMPDIR: dir,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  runner.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => runner.on('exit', (code) => resolve(code)));
  await api.waitFor('the task to be ready', () =>
    ['ready', 'grandchild-ready'].every((l) => api.text('stdout').includes(l)),
  );

  runner.kill('SIGTERM');

  expect(await exited).toBe(0);
  expect(stderr).toBe('');
  expect(api.result).toMatchObject({ exitCode: 0, stoppedBy: 'cancel' });
  expect(api.text('system')).toContain(
    "runner received SIGTERM; sending SIGTERM to the task's process group",
  );
  expect(await readFile(mark, 'utf8')).toBe('grandchild\n');
  const seen = api.text('stdout').filter((line) => line.startsWith('var '));
  expect(seen).toContain('var SLUICE_OUTPUTS');
  expect(seen).not.toContain('var SLUICE_DATABASE_URL');
  expect(seen).not.toContain('var SLUICE_RUN_TOKEN');
});
