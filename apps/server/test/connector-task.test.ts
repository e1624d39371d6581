import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import {
  adminToken,
  apiClient,
  ended,
  startStandalone,
  type StandaloneServer,
  type TaskRunView,
} from './standalone';

/*
 * `connector` tasks on the process executor of a real standalone server:
 * spec, check and discover of the example source, and connectors that break
 * the protocol (docs/connectors.md).
 */
const SOURCE = join(__dirname, '..', '..', '..', 'examples', 'connectors', 'source-sequence', 'main.cjs');
const NODE = process.execPath;
const SECRET_VALUE = 'pw-5f1c9e77/+=';

let db: TestDatabase;
let server: StandaloneServer;
let api: ReturnType<typeof apiClient>;
let scripts: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startStandalone(db.url);
  api = apiClient(server.publicUrl, await adminToken());
  // Readable by the task's user too (a root server runs process tasks as nobody).
  scripts = mkdtempSync(join(tmpdir(), 'sluice-connectors-'));
  chmodSync(scripts, 0o755);
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  if (scripts) rmSync(scripts, { recursive: true, force: true });
});

/** A connector script of the test's own, as a flow `command`. */
function connectorScript(name: string, body: string): string {
  const path = join(scripts, `${name}.cjs`);
  writeFileSync(path, body, { mode: 0o644 });
  return JSON.stringify([NODE, path]);
}

type RunView = TaskRunView & { error: string | null; exitCode: number | null };

async function runConnector(flow: string, task: string): Promise<{ state: string; run: RunView }> {
  const yaml = `tasks:\n  - id: op\n    type: connector\n    retry: { max_attempts: 1 }\n${task.replace(/^/gm, '    ')}\n`;
  const put = await api.putFlow('connectors', flow, yaml);
  if (put.status !== 200) throw new Error(`put flow: ${put.status} ${JSON.stringify(put.body)}`);
  const execution = await api.waitFor(await api.run('connectors', flow), ended);
  return { state: execution.state, run: execution.taskRuns[0] as RunView };
}

const source = `connector: { command: ${JSON.stringify([NODE, SOURCE])} }`;

test('spec: the output is the connector specification', async () => {
  const { state, run } = await runConnector('spec', `operation: spec\n${source}`);
  expect(state).toBe('SUCCEEDED');
  const spec = JSON.parse(run.outputs!.result!) as { connectionSpecification: { title: string } };
  expect(spec.connectionSpecification.title).toBe('Sequence source');
});

test('check with a valid config succeeds with status SUCCEEDED', async () => {
  const { state, run } = await runConnector(
    'check-ok',
    `operation: check\n${source}\nconfig: { records_per_stream: 5 }`,
  );
  expect(state).toBe('SUCCEEDED');
  expect(run.outputs).toMatchObject({ status: 'SUCCEEDED' });
  expect(JSON.parse(run.outputs!.result!)).toMatchObject({ status: 'SUCCEEDED' });
});

test('check with an invalid config is a successful check whose status is FAILED', async () => {
  const { state, run } = await runConnector(
    'check-bad',
    `operation: check\n${source}\nconfig: { records_per_stream: many }`,
  );
  expect(state).toBe('SUCCEEDED');
  expect(run.outputs!.status).toBe('FAILED');
  expect(run.outputs!.message).toContain('records_per_stream must be an integer');
});

test('discover: the output is the catalog with the configured streams', async () => {
  const { state, run } = await runConnector(
    'discover',
    `operation: discover\n${source}\nconfig: { streams: [users, orders], records_per_stream: 3 }`,
  );
  expect(state).toBe('SUCCEEDED');
  expect(run.outputs!.streams).toBe('2');
  const catalog = JSON.parse(run.outputs!.result!) as { streams: { name: string }[] };
  expect(catalog.streams.map((s) => s.name)).toEqual(['users', 'orders']);
});

test("discover with an invalid config fails with the connector's TRACE error message", async () => {
  const { state, run } = await runConnector('discover-bad', `operation: discover\n${source}\nconfig: {}`);
  expect(state).toBe('FAILED');
  expect(run.error).toMatch(/^invalid config: records_per_stream must be an integer/);
});

test('a connector that prints garbage and exits 0 fails, naming the missing result and its output', async () => {
  const command = connectorScript('garbage', `console.log('this is not a protocol message'); `);
  const { state, run } = await runConnector('garbage', `operation: spec\nconnector: { command: ${command} }`);
  expect(state).toBe('FAILED');
  expect(run.error).toContain('the connector exited with code 0 without a SPEC message');
  expect(run.error).toContain('this is not a protocol message');
  expect(run.outputs).toBeUndefined();
});

test('a malformed result message fails with the line and what was wrong', async () => {
  const command = connectorScript(
    'malformed',
    `console.log(JSON.stringify({ type: 'CATALOG', catalog: 7 }));`,
  );
  const { state, run } = await runConnector(
    'malformed',
    `operation: discover\nconnector: { command: ${command} }\nconfig: {}`,
  );
  expect(state).toBe('FAILED');
  expect(run.error).toMatch(/without a CATALOG message \(line 1: CATALOG catalog/);
});

test('a connector that exits non-zero without a TRACE fails with its exit code and last stderr lines', async () => {
  const command = connectorScript(
    'crash',
    `console.error('cannot reach the upstream API'); process.exit(3);`,
  );
  const { state, run } = await runConnector(
    'crash',
    `operation: check\nconnector: { command: ${command} }\nconfig: {}`,
  );
  expect(state).toBe('FAILED');
  expect(run.error).toContain('the connector exited with code 3 without a TRACE error');
  expect(run.error).toContain('cannot reach the upstream API');
  expect(run.exitCode).toBe(3);
});

const ECHO_CONFIG = `
const fs = require('node:fs');
const [op, flag, file] = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(file, 'utf8'));
const mode = (fs.statSync(file).mode & 0o777).toString(8);
const log = (message) => console.log(JSON.stringify({ type: 'LOG', log: { level: 'INFO', message } }));
log(op + ' ' + flag + ' mode ' + mode + ' user ' + config.user + ' password ' + config.auth.password);
console.error('stderr password ' + config.auth.password);
console.log(JSON.stringify({ type: 'CONNECTION_STATUS', connectionStatus: { status: 'SUCCEEDED', message: 'hello ' + config.auth.password } }));
`;

test('a config secret reaches the connector in a 0600 file and is masked in its logs and outputs', async () => {
  expect((await api.putSecret('connectors', 'db-password', SECRET_VALUE)).status).toBe(204);
  const command = connectorScript('echo-config', ECHO_CONFIG);
  const { state, run } = await runConnector(
    'secret',
    `operation: check\nconnector: { command: ${command} }\nconfig:\n  user: app\n  auth: { password: { secret: db-password } }`,
  );
  expect(state).toBe('SUCCEEDED');
  const lines = (await api.logs(run.id)).map((l) => l.line);
  expect(lines).toEqual(
    expect.arrayContaining(['INFO check --config mode 600 user app password ***', 'stderr password ***']),
  );
  expect(run.outputs).toMatchObject({ status: 'SUCCEEDED', message: 'hello ***' });
  expect(JSON.stringify({ lines, run })).not.toContain(SECRET_VALUE);
});

test('a config secret that is not set fails the task, naming where it is referenced', async () => {
  const command = connectorScript('never-runs', `process.exit(0);`);
  const { state, run } = await runConnector(
    'missing-secret',
    `operation: check\nconnector: { command: ${command} }\nconfig: { api: { key: { secret: nope } } }`,
  );
  expect(state).toBe('FAILED');
  expect(run.error).toBe('config.api.key: secret "nope" is not set in namespace connectors');
});

test('an over-long line fails the task even when a result follows, naming the line and the limit', async () => {
  const command = connectorScript(
    'long-line',
    `process.stdout.write('x'.repeat(64 * 1024 * 1024 + 10) + '\\n');
console.log(JSON.stringify({ type: 'SPEC', spec: { connectionSpecification: {} } }));`,
  );
  const { state, run } = await runConnector(
    'long-line',
    `operation: spec\nconnector: { command: ${command} }`,
  );
  expect(state).toBe('FAILED');
  expect(run.error).toContain(
    'the connector broke the protocol: line 1: line longer than the limit of 67108864 bytes',
  );
  expect(run.exitCode).toBeNull();
});
