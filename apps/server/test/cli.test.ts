import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyUserToken } from '@sluice/auth';
import { loadOrCreateSecrets } from '@sluice/bootstrap';

const SLUICE = join(__dirname, '..', '..', '..', 'bin', 'sluice.cjs');
const SECRET = 'cli-test-secret-0123456789abcdef0123456789';

function sluice(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [SLUICE, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the sluice entry point', () => {
  it('token create prints the token alone on its last line', async () => {
    const r = sluice(['token', 'create', '--workspace', 'w1', '--user', 'ada', '--role', 'admin'], {
      AUTH_JWT_SECRET: SECRET,
    });
    expect(r.code).toBe(0);
    const last = r.stdout.trimEnd().split('\n').pop()!;
    expect(last).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    await expect(verifyUserToken(SECRET, last)).resolves.toEqual({
      user: 'ada',
      workspace: 'w1',
      role: 'admin',
    });
  });

  it('token create without AUTH_JWT_SECRET uses (and keeps 0600) the standalone secret under SLUICE_DATA_DIR', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
    // It no longer creates one (that token would be rejected): a standalone server has started here.
    loadOrCreateSecrets(dir);
    const r = sluice(['token', 'create', '--workspace', 'w', '--user', 'u', '--role', 'member'], {
      SLUICE_DATA_DIR: dir,
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(join(dir, 'secrets.json'));
    expect(statSync(join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
  });

  it('token create names what is missing', () => {
    const r = sluice(['token', 'create', '--user', 'u'], { AUTH_JWT_SECRET: SECRET });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--workspace/);
    expect(r.stderr).toMatch(/--role/);
  });

  it('lists its commands and every app answers --help', () => {
    const help = sluice(['--help']);
    expect(help.code).toBe(0);
    for (const command of [
      'server',
      'jobs',
      'docker-executor',
      'k8s-executor',
      'exec',
      'runner-install',
      'token',
    ]) {
      expect(help.stdout).toContain(command);
    }
    for (const command of ['server', 'jobs', 'docker-executor', 'k8s-executor', 'exec']) {
      const r = sluice([command, '--help']);
      expect({ command, code: r.code }).toEqual({ command, code: 0 });
      expect(r.stdout.length).toBeGreaterThan(20);
    }
  });

  it('a server without --standalone and without a database URL refuses to start, naming the variables', () => {
    const r = sluice(['server'], {
      HTTP_SERVER_ADDR: '127.0.0.1:0',
      INTERNAL_HTTP_SERVER_ADDR: '127.0.0.1:0',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SLUICE_DATABASE_URL');
    expect(r.stderr).toContain('AUTH_JWT_SECRET');
  });

  it('exec without its variables exits 2 naming them', () => {
    const r = sluice(['exec']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SLUICE_RUN_TOKEN');
  });
});
