import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSyncLayout, openFifoConnector } from '@sluice/runner';

/**
 * `sluice connector-pipe` without `-- <command>`, as a kubernetes sync's connector container
 * runs it (docs/connectors.md#sync-on-kubernetes): the connector is the image's
 * AIRBYTE_ENTRYPOINT from the container's environment. The FIFOs are laid out as the sync's
 * init container lays them out (runner-install --sync-layout).
 */
const MAIN = join(__dirname, '..', 'dist', 'main.js');
const SOURCE = join(__dirname, '..', '..', '..', 'examples', 'connectors', 'source-sequence', 'main.cjs');

let dir: string;
const wrappers: ChildProcess[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'connector-pipe-env-'));
  await createSyncLayout(dir);
});

afterEach(() => {
  for (const w of wrappers.splice(0)) w.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function wrapper(env: Record<string, string>): Promise<number | null> {
  const child = spawn(process.execPath, [MAIN, 'connector-pipe', '--dir', dir, '--role', 'source'], {
    stdio: ['ignore', 'ignore', 'ignore'],
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  wrappers.push(child);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

const readAll = async (stream: NodeJS.ReadableStream) => {
  let text = '';
  for await (const chunk of stream) text += (chunk as Buffer).toString();
  return text;
};

test('runs the image’s AIRBYTE_ENTRYPOINT when no command follows', async () => {
  const exited = wrapper({ AIRBYTE_ENTRYPOINT: `${process.execPath} ${SOURCE}` });
  const source = await openFifoConnector({
    dir,
    role: 'source',
    start: {
      args: ['read', '--config', '{files}/config.json', '--catalog', '{files}/catalog.json'],
      files: {
        'config.json': JSON.stringify({ records_per_stream: 5 }),
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
    },
  });
  const [out] = await Promise.all([readAll(source.stdout), readAll(source.stderr)]);
  const records = out
    .trim()
    .split('\n')
    .filter((line) => (JSON.parse(line) as { type: string }).type === 'RECORD');
  expect(records).toHaveLength(5);
  expect(await source.exit).toEqual({ code: 0, signal: null });
  source.close();
  expect(await exited).toBe(0);
});

test('an image without an entrypoint: the runner is told why instead of waiting', async () => {
  const exited = wrapper({});
  await expect(
    openFifoConnector({ dir, role: 'source', start: { args: ['read'], files: {} } }),
  ).rejects.toThrow(/the source ended before it started: .*no connector command.*AIRBYTE_ENTRYPOINT/);
  expect(await exited).toBe(1);
});
