import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** The self-contained runner that `pnpm --filter @sluice/app-runner build` writes (pnpm test builds first). */
const SEA_DIR = join(__dirname, '..', 'dist', 'sea');

/** Starts the built runner the way executors do: through its own loader, NODE_OPTIONS empty, only `env`. */
function runSea(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(
    join(SEA_DIR, 'lib', 'ld-linux-x86-64.so.2'),
    ['--library-path', join(SEA_DIR, 'lib'), join(SEA_DIR, 'sluice'), ...args],
    { env: { NODE_OPTIONS: '', ...env } },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

test('the self-contained runner prints its usage once', async () => {
  const result = await runSea(['--help'], {});
  expect(result.code).toBe(0);
  expect(result.out.match(/Usage: sluice <command>/g)).toHaveLength(1);
});

test('the self-contained runner calls the runner API and reports a rejected run token', async () => {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'unauthorized', message: 'run token rejected' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const result = await runSea(['exec'], {
      SLUICE_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      SLUICE_RUN_TOKEN: 'eyJ.secret.token',
      SLUICE_TASK_RUN_ID: 'tr-1',
    });
    expect(result.code).toBe(1);
    expect(result.err).toContain('runner API getSpec: 401, the run token was rejected');
    expect(paths.length).toBeGreaterThan(0);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
