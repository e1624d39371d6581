import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');

/** Runs bin/sluice.cjs as a user would. The `jobs` case needs `pnpm build` (which `pnpm test` runs first). */
function sluice(...args: string[]) {
  const result = spawnSync(process.execPath, [path.join(root, 'bin/sluice.cjs'), ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('bin/sluice.cjs', () => {
  it('lists the commands for --help', () => {
    const { code, stdout } = sluice('--help');
    expect(code).toBe(0);
    for (const command of [
      'server',
      'token',
      'jobs',
      'docker-executor',
      'k8s-executor',
      'exec',
      'runner-install',
    ]) {
      expect(stdout).toContain(`  ${command} `);
    }
  });

  it('refuses an unknown command with exit code 2', () => {
    const { code, stderr } = sluice('serve');
    expect(code).toBe(2);
    expect(stderr).toContain('unknown command "serve"');
  });

  it("passes the command and its arguments to the app's main and exits with its code", () => {
    const help = sluice('jobs', '--help');
    expect(help.stderr).toBe('');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: sluice jobs');

    const run = sluice('jobs');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('SLUICE_DATABASE_URL or DB_DSN');
  });
});
