import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunnerTaskSpec } from '@sluice/protocol';
import { runTask } from '@sluice/runner';
import { FakeRunnerApi, taskSpec } from './support/fake-runner-api';

/**
 * The real runner with a real task process, against the fake runner API: a
 * resolved secret value the task prints, writes as an output or a metric tag,
 * or that ends up in the task run's error, reaches the API only as `***`.
 */
const SECRET = 'tok+en/Ae?b=c&d~"q"\\ s3cr3t';
const MULTILINE = 'line-one-of-key\nline-two-of-key';

let api: FakeRunnerApi;
let workRoot: string;
let runnerLog: string[];

beforeEach(async () => {
  api = await new FakeRunnerApi(taskSpec()).start();
  workRoot = await mkdtemp(join(tmpdir(), 'runner-mask-'));
  runnerLog = [];
});

afterEach(async () => {
  await api.stop();
  await rm(workRoot, { recursive: true, force: true });
  expect(api.problems).toEqual([]);
});

function run(spec: Partial<RunnerTaskSpec>) {
  api.spec = taskSpec({
    env: { API_KEY: SECRET, SSH_KEY: MULTILINE, REGION: 'eu-west-1' },
    secretValues: [SECRET, MULTILINE],
    ...spec,
  });
  return runTask({
    apiUrl: api.url,
    runToken: api.token,
    taskRunId: api.spec.taskRunId,
    workRoot,
    env: { PATH: process.env.PATH },
    handleSignals: false,
    log: (message) => runnerLog.push(message),
  });
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');
const forms = (value: string): string[] => {
  const std = b64(value);
  return [
    value,
    encodeURIComponent(value),
    std,
    std.replace(/=+$/, ''),
    std.replace(/\+/g, '-').replace(/\//g, '_'),
    ...value.split('\n'),
  ];
};

/** Every string the runner sent: each log batch as it arrived, outputs, metrics, the result. */
function everythingSent(): string[] {
  return [
    ...api.logBatches.flatMap((batch) => batch.lines.map((l) => l.line)),
    ...Object.entries(api.outputs).flat(),
    ...api.metrics.flatMap((m) => [m.name, ...Object.entries(m.tags).flat()]),
    api.result?.error ?? '',
    ...runnerLog,
  ];
}

function expectNothingLeaked(): void {
  const sent = everythingSent();
  for (const form of [...forms(SECRET), ...forms(MULTILINE)]) {
    const leaks = sent.filter((text) => text.includes(form));
    expect({ form, leaks }).toEqual({ form, leaks: [] });
  }
}

const TASK = `
const { appendFileSync } = require('node:fs');
const s = process.env.API_KEY;
const b64 = Buffer.from(s).toString('base64');
const url = b64.replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
for (const out of [process.stdout, process.stderr]) {
  out.write('plain ' + s + '\\n');
  out.write('base64 ' + b64 + ' url-safe ' + url + '\\n');
  out.write('url-encoded ' + encodeURIComponent(s) + '\\n');
  out.write('json ' + JSON.stringify({ s }) + '\\n');
  out.write('inside base64 ' + Buffer.from('Authorization: ' + s).toString('base64') + '\\n');
}
console.log(process.env.SSH_KEY);
console.log('region ' + process.env.REGION);
appendFileSync(process.env.SLUICE_OUTPUTS, 'token=' + s + '\\nencoded=' + b64 + '\\n');
appendFileSync(process.env.SLUICE_METRICS, JSON.stringify({ name: 'calls', value: 1, tags: { key: s } }) + '\\n');
// Half of the value now, the rest in a later chunk: masking works on whole lines.
process.stdout.write('split ' + s.slice(0, 7));
setTimeout(() => { process.stdout.write(s.slice(7) + ' end\\n'); process.exit(4); }, 300);
`;

test('a secret printed plain, base64 and URL-encoded, written as output and metric tag, reaches the API masked', async () => {
  const { exitCode } = await run({ task: { type: 'script', interpreter: 'node', script: TASK } });

  expect(exitCode).toBe(4);
  expectNothingLeaked();
  for (const stream of ['stdout', 'stderr'] as const) {
    expect(api.text(stream)).toEqual(
      expect.arrayContaining([
        'plain ***',
        'base64 *** url-safe ***',
        'url-encoded ***',
        'json {"s":"***"}',
        expect.stringMatching(/^inside base64 \S*\*\*\*\S*$/),
      ]),
    );
  }
  expect(api.text('stdout')).toEqual(expect.arrayContaining(['***', 'region eu-west-1', 'split *** end']));
  expect(api.outputs).toEqual({ token: '***', encoded: '***' });
  expect(api.metrics).toEqual([{ name: 'calls', value: 1, tags: { key: '***' } }]);
  expect(api.result).toMatchObject({ exitCode: 4, error: 'exit code 4' });
});

test('an error message that quotes the secret is masked in the result and the log', async () => {
  // The command itself is the secret value: "command not found: <value> …".
  const { exitCode } = await run({ task: { type: 'command', command: [SECRET] } });

  expect(exitCode).toBe(1);
  expect(api.result?.error).toBe('command not found: *** is not on PATH');
  expect(api.text('system')).toContain('command not found: *** is not on PATH');
  expectNothingLeaked();
});

test('a cut long line does not show the beginning of a secret that straddles the cut', async () => {
  const script = `printf '%s' "$(head -c 90 /dev/zero | tr '\\0' x)$API_KEY"; echo`;
  await run({
    task: { type: 'command', command: ['sh', '-c', script] },
    limits: { ...taskSpec().limits, logLineMaxBytes: 100 },
  });

  expect(api.text('stdout')).toEqual(['x'.repeat(90) + '*** [line cut: longer than 100 bytes]']);
  expectNothingLeaked();
});
