// The runner as the apps' `exec` loads it (src/bundled.ts): from the build's
// bundle with its code cache, and still correctly when the cache does not fit
// or there is no bundle. Runs the built dist (pnpm test builds first).
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from 'tar';
import { encodeRunnerAssignment } from '@sluice/protocol';
import { FakeRunnerApi, taskSpec } from './support/fake-runner-api';

const BUILT = join(__dirname, '..', 'dist', 'exec');
const CHILD = join(__dirname, 'support', 'bundled-exec-child.cjs');

let dir: string;
const apis: FakeRunnerApi[] = [];

beforeAll(() => {
  if (!existsSync(join(BUILT, 'runner.cjs'))) {
    throw new Error(`${BUILT}/runner.cjs is missing: run \`pnpm build\` (the runner's build writes it)`);
  }
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'runner-bundled-'));
});
afterEach(async () => {
  for (const api of apis.splice(0)) {
    await api.stop();
    expect(api.problems).toEqual([]);
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A snapshot bundle holding data/greeting.txt ("hello"), as the server hands it out (tar.gz). */
async function snapshotBundle(): Promise<Buffer> {
  const source = join(dir, 'snapshot-source');
  mkdirSync(join(source, 'data'), { recursive: true });
  writeFileSync(join(source, 'data', 'greeting.txt'), 'hello\n');
  const chunks: Buffer[] = [];
  for await (const chunk of create({ cwd: source, gzip: true, portable: true }, ['data'])) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Runs one task run with the runner loaded from `bundleDir`: the task prints a
 * file of its snapshot (extracted with the tar the bundle carries) and writes
 * an output. stdin is the assignment when `standby`.
 */
async function runWith(bundleDir: string, standby = false) {
  const snapshot = await snapshotBundle();
  const api = await new FakeRunnerApi(
    taskSpec({
      task: {
        type: 'command',
        command: ['sh', '-c', 'cat data/greeting.txt; echo rows=7 >> "$SLUICE_OUTPUTS"'],
      },
      snapshot: { id: 'snap-1', size: snapshot.length },
    }),
  ).start();
  api.snapshot = snapshot;
  apis.push(api);
  const vars = {
    SLUICE_API_URL: api.url,
    SLUICE_RUN_TOKEN: api.token,
    SLUICE_TASK_RUN_ID: api.spec.taskRunId,
  };
  const child = spawn(process.execPath, [CHILD, bundleDir, 'exec', ...(standby ? ['--standby'] : [])], {
    env: { PATH: process.env.PATH, TMPDIR: dir, ...(standby ? {} : vars) },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  if (standby) {
    child.stdin.write(
      encodeRunnerAssignment({ apiUrl: api.url, runToken: api.token, taskRunId: api.spec.taskRunId }),
    );
  }
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stderr, stdout: api.text('stdout'), outputs: api.outputs, result: api.result };
}

test('the build writes a bundle and a code cache this Node.js accepts, and the bundled runner runs a task run', async () => {
  const run = await runWith('built');
  expect(run.stderr).toContain('runner loaded from bundle+cache');
  expect(run).toMatchObject({ code: 0, stdout: ['hello'], outputs: { rows: '7' }, result: { exitCode: 0 } });
});

test('as a standby, the bundled runner takes its task run from stdin', async () => {
  const run = await runWith('built', true);
  expect(run.stderr).toContain('runner loaded from bundle+cache');
  expect(run).toMatchObject({ code: 0, stdout: ['hello'], result: { exitCode: 0 } });
});

test('a code cache V8 rejects (another Node.js build) costs only the compile: the runner still runs', async () => {
  const copy = join(dir, 'bundle');
  mkdirSync(copy);
  copyFileSync(join(BUILT, 'runner.cjs'), join(copy, 'runner.cjs'));
  writeFileSync(join(copy, 'runner.cjs.cache'), Buffer.from('not a code cache of this node'));
  const run = await runWith(copy);
  expect(run.stderr).toContain('runner loaded from bundle\n');
  expect(run).toMatchObject({ code: 0, stdout: ['hello'], result: { exitCode: 0 } });
});

test('without a bundle (a build without it) the runner loads from its modules', async () => {
  const run = await runWith(join(dir, 'no-bundle-here'));
  expect(run.stderr).toContain('runner loaded from modules');
  expect(run).toMatchObject({ code: 0, stdout: ['hello'], result: { exitCode: 0 } });
});
