import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syncVolumeLayout } from '@sluice/protocol';
import { main, MainIo } from '../src/main';

/** What `pnpm --filter @sluice/app-runner build` writes (pnpm test builds first). */
const BUILT_SEA_DIR = join(__dirname, '..', 'dist', 'sea');

function io(env: Record<string, string | undefined> = {}): MainIo & { out: string; err: string } {
  const captured = {
    env,
    out: '',
    err: '',
    stdout: (text: string) => void (captured.out += text),
    stderr: (text: string) => void (captured.err += text),
  };
  return captured;
}

test('help lists the commands and the three variables of exec', async () => {
  const term = io();
  expect(await main(['--help'], term)).toBe(0);
  for (const word of [
    'exec',
    'runner-install DIR',
    'SLUICE_API_URL',
    'SLUICE_RUN_TOKEN',
    'SLUICE_TASK_RUN_ID',
  ]) {
    expect(term.out).toContain(word);
  }
});

test('no command, or an unknown one, is a usage error', async () => {
  const none = io();
  expect(await main([], none)).toBe(2);
  expect(none.err).toContain('Usage: sluice <command>');
  const unknown = io();
  expect(await main(['serve'], unknown)).toBe(2);
  expect(unknown.err).toContain('unknown command serve');
});

test('exec without its variables names each missing one and exits 2', async () => {
  const term = io({ SLUICE_API_URL: 'http://127.0.0.1:1', SLUICE_TASK_RUN_ID: '' });
  expect(await main(['exec'], term)).toBe(2);
  expect(term.err).toContain('SLUICE_RUN_TOKEN: is required');
  expect(term.err).toContain('SLUICE_TASK_RUN_ID: must not be empty');
  expect(term.err).not.toContain('SLUICE_API_URL');
});

test('exec with a rejected run token exits non-zero with a clear message and no token in it', async () => {
  const server = createServer((req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'unauthorized', message: 'run token rejected' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const token = 'eyJ.secret.token';
  const term = io({
    SLUICE_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    SLUICE_RUN_TOKEN: token,
    SLUICE_TASK_RUN_ID: 'tr-1',
  });
  try {
    expect(await main(['exec'], term)).toBe(1);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  expect(term.err).toBe(
    'sluice exec: runner API getSpec: 401, the run token was rejected (wrong, expired, or the task run has ended)\n',
  );
  expect(term.err).not.toContain(token);
});

test('runner-install without a self-contained build exits 2, names what to build, and writes nothing', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'runner-install-'));
  try {
    const term = io();
    term.builtSeaDir = join(dir, 'no-sea');
    expect(await main(['runner-install', join(dir, 'target')], term)).toBe(2);
    expect(term.err).toContain(`${join(dir, 'no-sea', 'sluice')} does not exist`);
    expect(term.err).toContain('pnpm --filter @sluice/app-runner build');
    expect(await readdir(dir)).toEqual([]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('runner-install copies the self-contained runner and its libraries, and the copy runs', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'runner-install-'));
  try {
    const term = io();
    term.builtSeaDir = BUILT_SEA_DIR;
    const target = join(dir, 'sluice-bin');
    expect(await main(['runner-install', target], term)).toBe(0);
    expect(term.err).toBe('');
    expect((await readdir(join(target, 'lib'))).sort()).toEqual(
      (await readdir(join(BUILT_SEA_DIR, 'lib'))).sort(),
    );
    expect((await stat(join(target, 'sluice'))).mode & 0o777).toBe(0o755);

    const copy = spawnSync(
      join(target, 'lib', 'ld-linux-x86-64.so.2'),
      ['--library-path', join(target, 'lib'), join(target, 'sluice'), '--help'],
      { env: { NODE_OPTIONS: '' }, encoding: 'utf8' },
    );
    expect(copy.stderr).toBe('');
    expect(copy.status).toBe(0);
    expect(copy.stdout).toContain('Usage: sluice <command>');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('runner-install --sync-layout also lays out a sync’s FIFOs and work dir (the kubernetes sync init container)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'runner-install-'));
  try {
    const term = io();
    term.builtSeaDir = BUILT_SEA_DIR;
    const target = join(dir, 'sluice-bin');
    const syncDir = join(dir, 'sluice-sync');
    await mkdir(syncDir);
    const umask = process.umask(0o022);
    try {
      expect(await main(['runner-install', target, '--sync-layout', syncDir], term)).toBe(0);
    } finally {
      process.umask(umask);
    }
    expect(term.err).toBe('');
    expect((await stat(join(target, 'sluice'))).mode & 0o777).toBe(0o755);
    const layout = syncVolumeLayout();
    for (const entry of layout) {
      const info = await stat(join(syncDir, entry.path));
      expect({ path: entry.path, fifo: info.isFIFO(), mode: info.mode & 0o7777 }).toEqual({
        path: entry.path,
        fifo: entry.type === 'fifo',
        mode: entry.mode,
      });
    }
    // Nothing but the layout: the FIFO helper is removed.
    expect((await readdir(syncDir)).sort()).toEqual(['pipes', 'work']);
    expect((await readdir(join(syncDir, 'pipes'))).length).toBe(
      layout.filter((e) => e.type === 'fifo').length,
    );
    // A rerun keeps what is there.
    expect(await main(['runner-install', target, '--sync-layout', syncDir], term)).toBe(0);
    expect(term.err).toBe('');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a wrong invocation of exec or runner-install is one line, exit 2, and installs nothing', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'runner-install-'));
  try {
    for (const argv of [
      ['exec', '--bogus'],
      ['runner-install', '--bogus'],
      ['runner-install'],
      ['runner-install', join(dir, 'a'), join(dir, 'b')],
      ['runner-install', join(dir, 'a'), '--sync-layout'],
    ]) {
      const term = io();
      term.builtSeaDir = BUILT_SEA_DIR;
      expect({ argv, code: await main(argv, term) }).toEqual({ argv, code: 2 });
      expect(term.err).toMatch(/^sluice (exec|runner-install): [^\n]+\n$/);
      expect(term.out).toBe('');
    }
    expect(await readdir(dir)).toEqual([]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('exec --help and runner-install --help print the usage and the variables of exec', async () => {
  for (const argv of [
    ['exec', '--help'],
    ['runner-install', '--help'],
  ]) {
    const term = io();
    expect(await main(argv, term)).toBe(0);
    expect(term.out).toContain('SLUICE_RUN_TOKEN [secret]');
    expect(term.err).toBe('');
  }
});
