import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from 'tar';
import { RunnerTaskSpec, RunTokenRejectedError } from '@sluice/protocol';
import { runTask, RunTaskOptions } from '@sluice/runner';
import { FakeRunnerApi, taskSpec } from './support/fake-runner-api';

let api: FakeRunnerApi;
let workRoot: string;
let runnerLog: string[];

beforeEach(async () => {
  api = await new FakeRunnerApi(taskSpec()).start();
  workRoot = await mkdtemp(join(tmpdir(), 'runner-test-'));
  runnerLog = [];
});

afterEach(async () => {
  await api.stop();
  await rm(workRoot, { recursive: true, force: true });
  expect(api.problems).toEqual([]);
});

function run(
  spec: Partial<RunnerTaskSpec>,
  env: Record<string, string | undefined> = { PATH: process.env.PATH },
  extra: Partial<RunTaskOptions> = {},
) {
  api.spec = taskSpec(spec);
  return runTask({
    ...extra,
    apiUrl: api.url,
    runToken: api.token,
    taskRunId: api.spec.taskRunId,
    workRoot,
    env,
    handleSignals: false,
    log: (message) => runnerLog.push(message),
  });
}

const sh = (script: string): Partial<RunnerTaskSpec> => ({
  task: { type: 'command', command: ['sh', '-c', script] },
});

test("a command's stdout and stderr arrive complete, in order, with gap-free seqs", async () => {
  const { exitCode } = await run(
    sh('for i in $(seq 1 300); do echo "out-$i"; echo "err-$i" >&2; done; printf "no newline at the end"'),
  );

  expect(exitCode).toBe(0);
  const lines = api.lines();
  expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
  expect(api.text('stdout')).toEqual([
    ...Array.from({ length: 300 }, (_, i) => `out-${i + 1}`),
    'no newline at the end',
  ]);
  expect(api.text('stderr')).toEqual(Array.from({ length: 300 }, (_, i) => `err-${i + 1}`));
  expect(api.text('system')[0]).toMatch(/^task started \(pid \d+\)$/);
  expect(api.startedPid).toEqual(expect.any(Number));
  expect(api.result).toEqual({ fence: 3, exitCode: 0, stoppedBy: null, error: null });
});

test('a long line is cut at the limit and marked', async () => {
  await run({
    ...sh('head -c 5000 /dev/zero | tr "\\0" x; echo; echo after'),
    limits: { ...taskSpec().limits, logLineMaxBytes: 100 },
  });

  expect(api.text('stdout')).toEqual(['x'.repeat(100) + ' [line cut: longer than 100 bytes]', 'after']);
});

test('outputs, metrics and artifacts the task writes are delivered, the ones over a limit skipped and logged', async () => {
  const script = `
    echo "# a comment" >> "$SLUICE_OUTPUTS"
    echo "rows=41" >> "$SLUICE_OUTPUTS"
    echo "" >> "$SLUICE_OUTPUTS"
    echo "rows=42" >> "$SLUICE_OUTPUTS"
    echo "path=/a=b" >> "$SLUICE_OUTPUTS"
    echo "huge=$(head -c 100 /dev/zero | tr '\\0' y)" >> "$SLUICE_OUTPUTS"
    echo '{"name":"rows_read","value":42,"tags":{"table":"users"}}' >> "$SLUICE_METRICS"
    echo 'not json' >> "$SLUICE_METRICS"
    echo '{"name":"duration_s","value":1.5}' >> "$SLUICE_METRICS"
    mkdir -p "$SLUICE_ARTIFACTS/reports"
    echo "a,b" > "$SLUICE_ARTIFACTS/reports/daily summary.csv"
    head -c 2000 /dev/zero > "$SLUICE_ARTIFACTS/too-big.bin"
    echo done > "$SLUICE_ARTIFACTS/z.txt"
    exit 3
  `;
  const { exitCode } = await run(sh(script));

  expect(exitCode).toBe(3);
  expect(api.result).toMatchObject({ exitCode: 3, stoppedBy: null, error: 'exit code 3' });
  expect(api.outputs).toEqual({ rows: '42', path: '/a=b' });
  expect(api.metrics).toEqual([
    { name: 'rows_read', value: 42, tags: { table: 'users' } },
    { name: 'duration_s', value: 1.5, tags: {} },
  ]);
  expect([...api.artifacts.keys()].sort()).toEqual(['reports/daily summary.csv', 'z.txt']);
  expect(api.artifacts.get('reports/daily summary.csv')!.toString()).toBe('a,b\n');
  expect(api.text('system')).toEqual(
    expect.arrayContaining([
      'output huge rejected: its value is 100 bytes, over the limit of 64',
      'metrics line 2 ignored: not JSON',
      'artifact too-big.bin skipped: 2000 bytes is over the limit of 1024 per artifact',
    ]),
  );
  expect(await readdir(workRoot)).toEqual([]);
});

test('the task sees its own environment and not the runner’s other variables', async () => {
  const runnerEnv = {
    PATH: process.env.PATH,
    HOME: '/home/runner-test',
    http_proxy: 'http://proxy.test:3128',
    SLUICE_DATABASE_URL: 'postgres://secret@db/sluice',
    SLUICE_MASTER_KEYS: 'k1',
    SLUICE_RUN_TOKEN: api.token,
    SLUICE_API_URL: api.url,
  };
  await run({ ...sh('env | sort'), env: { API_TOKEN: 'from-the-spec', HOME: '/home/task' } }, runnerEnv);

  const env = new Map(
    api.text('stdout').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  expect(env.get('API_TOKEN')).toBe('from-the-spec');
  expect(env.get('HOME')).toBe('/home/task');
  expect(env.get('http_proxy')).toBe('http://proxy.test:3128');
  expect(env.get('SLUICE_TASK_RUN_ID')).toBe('tr-test');
  expect(env.get('SLUICE_EXECUTION_ID')).toBe('ex-test');
  expect(env.get('SLUICE_ATTEMPT')).toBe('1');
  for (const name of ['SLUICE_OUTPUTS', 'SLUICE_ARTIFACTS', 'SLUICE_METRICS', 'SLUICE_WORK_DIR']) {
    expect(env.get(name)).toMatch(new RegExp(`^${workRoot}/sluice-run-`));
  }
  for (const name of ['SLUICE_DATABASE_URL', 'SLUICE_MASTER_KEYS', 'SLUICE_RUN_TOKEN', 'SLUICE_API_URL']) {
    expect(env.has(name)).toBe(false);
  }
});

test('a bash script runs in the work dir with the files of the snapshot bundle', async () => {
  const source = join(workRoot, 'namespace');
  await mkdir(join(source, 'data'), { recursive: true });
  await writeFile(join(source, 'data', 'input.txt'), 'rows from the bundle\n');
  await writeFile(join(source, 'lib.sh'), 'greet() { echo "hello from lib.sh"; }\n');
  api.snapshot = await tarGz(source, ['data', 'lib.sh']);

  const { exitCode } = await run({
    snapshot: { id: 'snap-1', size: api.snapshot.length },
    task: {
      type: 'script',
      interpreter: 'bash',
      script: 'source ./lib.sh\ngreet\ncat data/input.txt\n[[ -n "$BASH_VERSION" ]] && echo bash\n',
    },
  });

  expect(exitCode).toBe(0);
  expect(api.text('stdout')).toEqual(['hello from lib.sh', 'rows from the bundle', 'bash']);
});

test('a node script runs with node', async () => {
  await run({
    task: {
      type: 'script',
      interpreter: 'node',
      script: 'console.log(`node ${process.env.SLUICE_ATTEMPT}`);',
    },
  });

  expect(api.text('stdout')).toEqual(['node 1']);
});

test('a python script runs with python3 when uv is not on PATH', async () => {
  const pathWithoutUv = (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => !existsSync(join(dir, 'uv')))
    .join(':');
  await run(
    {
      task: {
        type: 'script',
        interpreter: 'python',
        script: 'import os, sys\nprint(os.path.basename(sys.executable), os.environ["SLUICE_ATTEMPT"])\n',
      },
    },
    { PATH: pathWithoutUv },
  );

  expect(api.text('stdout')).toEqual([expect.stringMatching(/^python3(\.\d+)? 1$/)]);
});

test('a snapshot entry escaping the work dir fails the task run before it starts', async () => {
  const source = join(workRoot, 'evil', 'inner');
  await mkdir(source, { recursive: true });
  await writeFile(join(workRoot, 'evil', 'escape.txt'), 'outside\n');
  api.snapshot = await tarGz(source, ['../escape.txt'], true);

  const { exitCode } = await run({
    snapshot: { id: 'snap-evil', size: api.snapshot.length },
    ...sh('echo ran'),
  });

  expect(exitCode).toBe(1);
  // Deterministic: the server ends the task run with this reason and does not retry it.
  expect(api.result).toMatchObject({ exitCode: null, stoppedBy: null, reason: 'invalid_task' });
  expect(api.result!.error).toMatch(
    /^snapshot: snapshot bundle refused: \.\.\/escape\.txt: path escapes the work dir/,
  );
  expect(api.text('stdout')).toEqual([]);
  expect(api.startedPid).toBeNull();
});

test('a command that is not on PATH is reported as the result', async () => {
  const { exitCode } = await run({ task: { type: 'command', command: ['no-such-command-sluice'] } });

  expect(exitCode).toBe(1);
  expect(api.result).toMatchObject({
    exitCode: null,
    error: 'command not found: no-such-command-sluice is not on PATH',
  });
  // Another instance or image may have it: an ordinary failure, retried.
  expect(api.result!.reason).toBeUndefined();
  expect(api.text('system')).toContain('command not found: no-such-command-sluice is not on PATH');
});

test('a log batch answered 500 is sent again with the same seqs and stored once', async () => {
  api.failLogBatches = 1;

  await run(sh('for i in $(seq 1 50); do echo "line-$i"; done'));

  const [failed, resent] = api.logBatches;
  expect(failed!.status).toBe(500);
  expect(resent!.status).toBe(200);
  expect(resent!.lines.slice(0, failed!.lines.length)).toEqual(failed!.lines);
  expect(api.text('stdout')).toEqual(Array.from({ length: 50 }, (_, i) => `line-${i + 1}`));
  const lines = api.lines();
  expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
});

test('output faster than a slow server is paused, not dropped or reordered', async () => {
  api.logDelayMs = 20;

  const { exitCode } = await run(sh('seq 1 10000'), undefined, { maxQueuedLogLines: 1000 });

  expect(exitCode).toBe(0);
  expect(api.text('stdout')).toEqual(Array.from({ length: 10000 }, (_, i) => String(i + 1)));
  expect(Math.max(...api.logBatches.map((b) => b.lines.length))).toBeLessThanOrEqual(500);
});

test('a rejected run token stops the runner before anything runs', async () => {
  api.rejectToken = true;

  await expect(run(sh(`touch ${join(workRoot, 'ran')}`))).rejects.toBeInstanceOf(RunTokenRejectedError);
  expect(existsSync(join(workRoot, 'ran'))).toBe(false);
  expect(api.result).toBeNull();
});

async function tarGz(cwd: string, entries: string[], preservePaths = false): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of create({ cwd, gzip: true, portable: true, preservePaths }, entries))
    chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
