import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunnerTaskSpec } from '@sluice/protocol';
import { runTask } from '@sluice/runner';
import { FakeRunnerApi, taskSpec } from './support/fake-runner-api';

/* The runner's side of a connector task (docs/connectors.md), against a fake runner API. */
const SOURCE = join(__dirname, '..', '..', '..', 'examples', 'connectors', 'source-sequence', 'main.cjs');

let api: FakeRunnerApi;
let workRoot: string;

beforeEach(async () => {
  api = await new FakeRunnerApi(taskSpec()).start();
  workRoot = await mkdtemp(join(tmpdir(), 'runner-connector-test-'));
});

afterEach(async () => {
  await api.stop();
  await rm(workRoot, { recursive: true, force: true });
  expect(api.problems).toEqual([]);
});

type Connector = Extract<RunnerTaskSpec['task'], { type: 'connector' }>;

function run(
  task: Omit<Connector, 'type' | 'config'> & { config?: Record<string, unknown> },
  env: Record<string, string | undefined> = {},
) {
  api.spec = taskSpec({ task: { type: 'connector', config: {}, ...task } });
  return runTask({
    apiUrl: api.url,
    runToken: api.token,
    taskRunId: api.spec.taskRunId,
    workRoot,
    env: { PATH: process.env.PATH, ...env },
    handleSignals: false,
    log: () => {},
  });
}

/** A connector written inline: `node -e <script> --` then the operation and its arguments. */
const inline = (script: string) => [process.execPath, '-e', script, '--'];

test('a result too large for an output is uploaded as an artifact, the flat outputs stay', async () => {
  const { exitCode } = await run({
    operation: 'discover',
    command: [process.execPath, SOURCE],
    config: { records_per_stream: 1 },
  });
  expect(exitCode).toBe(0);
  expect(api.result).toMatchObject({ exitCode: 0, error: null });
  // The fake's output limit is 64 bytes: far below one stream's catalog.
  expect(api.outputs).toEqual({ result_artifact: 'discover-result.json', streams: '1' });
  const catalog = JSON.parse(api.artifacts.get('discover-result.json')!.toString()) as {
    streams: { name: string }[];
  };
  expect(catalog.streams.map((s) => s.name)).toEqual(['numbers']);
  expect(api.text('system')).toContainEqual(
    expect.stringMatching(/^the result is \d+ bytes, over the output limit of 64: it is the artifact/),
  );
});

test('spec gets no config; LOG messages and stray prints become log lines, a broken LOG only a system line', async () => {
  const { exitCode } = await run({
    operation: 'spec',
    command: inline(`
      const out = (m) => console.log(JSON.stringify(m));
      out({ type: 'LOG', log: { level: 'WARN', message: 'args ' + process.argv.slice(1).join(' ') } });
      console.log('a stray print');
      out({ type: 'LOG', log: { level: 12 } });
      out({ type: 'SPEC', spec: { connectionSpecification: {} } });
    `),
  });
  expect(exitCode).toBe(0);
  expect(api.text('stdout')).toEqual(['WARN args spec', 'a stray print']);
  expect(api.text('system')).toContainEqual(
    expect.stringMatching(/^connector protocol error: line 3: LOG log\.level/),
  );
  expect(api.outputs).toEqual({ result: '{"connectionSpecification":{}}' });
});

test('a failure keeps the newest log lines that fit in the error', async () => {
  const { exitCode } = await run({
    operation: 'check',
    command: inline(
      `for (let i = 1; i <= 20; i++) console.error(i + ' ' + 'e'.repeat(1000)); process.exit(2);`,
    ),
  });
  expect(exitCode).toBe(2);
  const error = api.result!.error!;
  expect(error.length).toBeLessThanOrEqual(8192);
  expect(error).toMatch(/^the connector exited with code 2 without a TRACE error\nlast log lines:\n/);
  expect(error.endsWith(`20 ${'e'.repeat(397)}…`)).toBe(true);
  expect(api.outputs).toEqual({});
});

test('a connector with only an image and no AIRBYTE_ENTRYPOINT cannot run: refused as an invalid task', async () => {
  const { exitCode } = await run({ operation: 'spec', image: 'airbyte/source-faker:6' });
  expect(exitCode).toBe(1);
  expect(api.result).toMatchObject({
    exitCode: null,
    reason: 'invalid_task',
    error:
      'the connector has no command, and its image sets no AIRBYTE_ENTRYPOINT here (image airbyte/source-faker:6)',
  });
});

test("an image's connector runs its AIRBYTE_ENTRYPOINT, as in the image's own container", async () => {
  const { exitCode } = await run(
    { operation: 'check', image: 'example/source-sequence', config: { records_per_stream: 2 } },
    { AIRBYTE_ENTRYPOINT: ` ${process.execPath}   ${SOURCE} ` },
  );
  expect(exitCode).toBe(0);
  expect(api.outputs).toMatchObject({ status: 'SUCCEEDED' });
});

test('an image without AIRBYTE_ENTRYPOINT runs the command the docker executor read from its config (SLUICE_CONNECTOR_ENTRYPOINT)', async () => {
  const { exitCode } = await run(
    { operation: 'check', image: 'example/source-sequence', config: { records_per_stream: 2 } },
    // A JSON array: an argument with a space would survive it.
    { SLUICE_CONNECTOR_ENTRYPOINT: JSON.stringify([process.execPath, SOURCE]) },
  );
  expect(exitCode).toBe(0);
  expect(api.outputs).toMatchObject({ status: 'SUCCEEDED' });
});
