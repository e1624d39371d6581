import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * `exec` starts once per task run on the process executor, so each app's
 * main must reach the runner without loading the server side: no express,
 * no winston. Checked on the built apps in a fresh node, by what its
 * require.cache holds once main resolved (CJS loaded by import() is there
 * too: the runner's bundle is, which proves the check sees it).
 */
const APPS = join(__dirname, '..', '..');

const PROBE = `
const { PassThrough } = require('node:stream');
const [file, ...argv] = process.argv.slice(1);
const io = { env: { EXECUTOR_API_URL: 'http://127.0.0.1:9', EXECUTOR_API_TOKEN: 't', DOCKER_HOST: 'unix:///nonexistent.sock' }, stdout: new PassThrough(), stderr: new PassThrough() };
Promise.resolve(require(file).main(argv, io)).then((code) => {
  process.stdout.write(JSON.stringify({ code, loaded: Object.keys(require.cache) }));
});
`;

async function loadedBy(app: string, argv: string[]): Promise<{ code: number; loaded: string[] }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['-e', PROBE, join(APPS, app, 'dist', 'main.js'), ...argv],
    { env: { PATH: process.env.PATH ?? '' } },
  );
  return JSON.parse(stdout) as { code: number; loaded: string[] };
}

const heavy = (loaded: string[]) => loaded.filter((path) => /[\\/](express|winston)[\\/]/.test(path));

describe('sluice exec stays light', () => {
  it.each(['server', 'docker-executor', 'k8s-executor'])(
    '%s exec loads the runner and neither express nor winston',
    async (app) => {
      const { code, loaded } = await loadedBy(app, ['exec']);
      expect(code).toBe(2); // no SLUICE_RUN_TOKEN and friends
      expect(loaded.some((path) => path.endsWith(join('runner', 'dist', 'bundled.js')))).toBe(true);
      expect(heavy(loaded)).toEqual([]);
    },
  );

  it('sees express and winston where an executor instance is started (the check bites)', async () => {
    const { code, loaded } = await loadedBy('docker-executor', ['docker-executor']);
    expect(code).toBe(2); // auto finds no Docker
    expect(heavy(loaded).length).toBeGreaterThan(0);
  });
});
