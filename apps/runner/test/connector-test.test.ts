import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, MainIo } from '../src/main';

// `sluice connector test`: the conformance check a connector author runs (docs/connectors.md#conformance).

const EXAMPLES = join(__dirname, '..', '..', '..', 'examples', 'connectors');
const NODE = process.execPath;

function io(): MainIo & { out: string; err: string } {
  const captured = {
    env: {},
    out: '',
    err: '',
    stdout: (text: string) => void (captured.out += text),
    stderr: (text: string) => void (captured.err += text),
  };
  return captured;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'connector-test-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

test('the example source passes: spec, check, discover, read, states', async () => {
  const config = join(dir, 'source.json');
  await writeFile(
    config,
    JSON.stringify({ streams: ['users', 'orders'], records_per_stream: 250, state_every: 100 }),
  );
  const term = io();
  const code = await main(
    ['connector', 'test', '--config', config, NODE, join(EXAMPLES, 'source-sequence', 'main.cjs')],
    term,
  );
  expect({ code, err: term.err }).toEqual({ code: 0, err: '' });
  expect(term.out).toContain('ok   spec: a SPEC message');
  expect(term.out).toContain('ok   check: CONNECTION_STATUS SUCCEEDED');
  expect(term.out).toContain('ok   discover: a CATALOG of 2 streams (users, orders)');
  expect(term.out).toContain('ok   read: 500 records, 6 states');
  expect(term.out).toContain(
    'ok   states: 6 states, valid, in order, none repeated twice in a row, one for every stream',
  );
  expect(term.out).toContain('PASS: 5 checks');
});

test('the null destination passes: its write echoes every state in order', async () => {
  const term = io();
  expect(await main(['connector', 'test', NODE, join(EXAMPLES, 'destination-null', 'main.cjs')], term)).toBe(
    0,
  );
  expect(term.out).toContain('ok   write: 12 records and 4 states written; 4 echoes, in order');
  expect(term.out).toContain('PASS: 3 checks');
});

test('a broken source fails with a readable report of each problem', async () => {
  const path = join(dir, 'broken.cjs');
  await writeFile(
    path,
    `const [op] = process.argv.slice(2);
const out = (m) => console.log(JSON.stringify(m));
const stream = (name) => ({ name, json_schema: {}, supported_sync_modes: ['full_refresh'] });
const state = (name, c) => ({ type: 'STATE', state: { type: 'STREAM', stream: { stream_descriptor: { name }, stream_state: { c } } } });
if (op === 'spec') out({ type: 'SPEC', spec: { connectionSpecification: {} } });
if (op === 'check') out({ type: 'CONNECTION_STATUS', connectionStatus: { status: 'SUCCEEDED' } });
if (op === 'discover') out({ type: 'CATALOG', catalog: { streams: [stream('a'), stream('b')] } });
if (op === 'read') {
  out({ type: 'RECORD', record: { stream: 'a', emitted_at: 1, data: { id: 1 } } });
  out(state('a', 1));
  out(state('a', 1));
  out({ type: 'RECORD', record: { stream: 'a', emitted_at: 1, data: 'not an object' } });
}`,
  );
  const term = io();
  expect(await main(['connector', 'test', NODE, path], term)).toBe(1);
  expect(term.out).toContain('ok   read: 1 records, 2 states');
  expect(term.out).toContain('FAIL states: line 3: the same state twice in a row:');
  expect(term.out).toContain('line 4: RECORD record.data');
  expect(term.out).toContain('no state for stream(s) b');
  expect(term.out).toContain('FAIL: 1 of 5 checks failed');
});

test('a connector that cannot start, and usage errors', async () => {
  const missing = io();
  expect(await main(['connector', 'test', '/nonexistent/connector'], missing)).toBe(1);
  expect(missing.out).toContain('FAIL spec: the connector command was not found: /nonexistent/connector');
  const none = io();
  expect(await main(['connector', 'test'], none)).toBe(2);
  expect(none.err).toContain('the connector command is required');
  const bad = io();
  expect(await main(['connector', 'test', '--timeout', 'soon', 'x'], bad)).toBe(2);
  expect(bad.err).toContain('--timeout must be a positive integer, got soon');
  const help = io();
  expect(await main(['connector', 'test', '--help'], help)).toBe(0);
  expect(help.out).toContain('Usage: sluice connector test [options] <command...>');
});
