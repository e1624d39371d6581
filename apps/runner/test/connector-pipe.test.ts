import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allSyncPipes, SYNC_PIPES_DIR, SYNC_WORK_DIR } from '@sluice/protocol';
import { openFifoConnector } from '@sluice/runner';
import { main } from '../src/main';

/**
 * `sluice connector-pipe` on this machine's FIFOs (as the docker executor
 * lays them out in a sync's volume, docs/connectors.md#sync-on-docker),
 * driven by the runner's side of the pipes. The wrapper is the built app,
 * a process of its own, as in a connector's container.
 */
const MAIN = join(__dirname, '..', 'dist', 'main.js');
const SOURCE = join(__dirname, '..', '..', '..', 'examples', 'connectors', 'source-sequence', 'main.cjs');

let dir: string;
const wrappers: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'connector-pipe-'));
  mkdirSync(join(dir, SYNC_PIPES_DIR));
  mkdirSync(join(dir, SYNC_WORK_DIR), { mode: 0o1777 });
  for (const pipe of allSyncPipes()) execFileSync('mkfifo', ['-m', '666', join(dir, pipe)]);
});

afterEach(() => {
  for (const w of wrappers.splice(0)) w.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function wrapper(command: string[]): ChildProcess & { exitCode_: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    [MAIN, 'connector-pipe', '--dir', dir, '--role', 'source', '--', ...command],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  wrappers.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return Object.assign(child, { exitCode_: exited });
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += (chunk as Buffer).toString();
  return text;
}

const start = (records: number) => ({
  args: ['read', '--config', '{files}/config.json', '--catalog', '{files}/catalog.json'],
  files: {
    'config.json': JSON.stringify({ records_per_stream: records, state_every: 10 }),
    'catalog.json': JSON.stringify({
      streams: [
        {
          stream: { name: 'numbers', json_schema: {} },
          sync_mode: 'full_refresh',
          destination_sync_mode: 'append',
        },
      ],
    }),
  },
});

test('runs the connector with its stdout on the pipe and its files 0600 in its own dir, and reports its exit', async () => {
  const w = wrapper([process.execPath, SOURCE]);
  const source = await openFifoConnector({ dir, role: 'source', start: start(25) });
  const [out] = await Promise.all([readAll(source.stdout), readAll(source.stderr)]);
  const messages = out
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string });
  expect(messages.filter((m) => m.type === 'RECORD')).toHaveLength(25);
  expect(messages.filter((m) => m.type === 'STATE').length).toBeGreaterThanOrEqual(3);
  expect(await source.exit).toEqual({ code: 0, signal: null });
  source.close();
  expect(await w.exitCode_).toBe(0);
  const config = join(dir, SYNC_WORK_DIR, 'source', 'config.json');
  expect(statSync(config).mode & 0o777).toBe(0o600);
  expect(statSync(join(dir, SYNC_WORK_DIR, 'source')).mode & 0o777).toBe(0o700);
  expect(JSON.parse(readFileSync(config, 'utf8'))).toEqual({ records_per_stream: 25, state_every: 10 });
});

test('the runner closing the control pipe (it is gone) stops the connector', async () => {
  // A source that never ends: it waits on its stdin-less loop until a signal.
  const w = wrapper([process.execPath, '-e', 'setInterval(() => {}, 1000)', '--']);
  const source = await openFifoConnector({ dir, role: 'source', start: { args: [], files: {} } });
  source.close();
  expect(await source.exit).toEqual({ code: null, signal: 'SIGTERM' });
  expect(await w.exitCode_).toBe(128 + 15);
});

test('a connector command that does not exist: its exit names it, and the runner is told instead of waiting', async () => {
  const w = wrapper(['/no/such/connector']);
  const source = await openFifoConnector({ dir, role: 'source', start: { args: ['read'], files: {} } });
  const exit = await source.exit;
  expect(exit).toMatchObject({ code: 127, signal: null });
  expect(exit.error).toMatch(/starting \/no\/such\/connector failed: spawn \/no\/such\/connector ENOENT/);
  expect(await w.exitCode_).toBe(127);
});

test('a wrong invocation is a usage error', async () => {
  let err = '';
  const io = { env: {}, stdout: () => undefined, stderr: (t: string) => void (err += t) };
  expect(await main(['connector-pipe', '--role', 'source', '--', 'x'], io)).toBe(2);
  expect(err).toBe('sluice connector-pipe: --dir is required\n');
});
