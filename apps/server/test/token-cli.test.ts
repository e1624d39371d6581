import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyUserToken } from '@sluice/auth';
import { loadOrCreateSecrets } from '@sluice/bootstrap';

/** `sluice token ...` as a user runs it: the built entry point in a child process. */
const SLUICE = join(__dirname, '..', '..', '..', 'bin', 'sluice.cjs');
const SECRET = 'token-cli-test-secret-0123456789abcdef';
const CREATE = ['token', 'create', '--workspace', 'w1', '--user', 'ada', '--role', 'admin'];

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'sluice-token-cli-'));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

function sluice(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [SLUICE, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The claims of a JWT, read without verifying it. */
function decodeJwt(token: string): { iat?: number; exp?: number } {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
    iat?: number;
    exp?: number;
  };
}

const lastLine = (text: string): string => text.trimEnd().split('\n').pop() ?? '';

/** One line, no stack trace. */
function expectOneLine(stderr: string): void {
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
}

test('a token carries exp, 30 days out by default', async () => {
  const r = sluice(CREATE, { AUTH_JWT_SECRET: SECRET });
  expect(r.code).toBe(0);
  const token = lastLine(r.stdout);
  await expect(verifyUserToken(SECRET, token)).resolves.toEqual({
    user: 'ada',
    workspace: 'w1',
    role: 'admin',
  });
  const { iat, exp } = decodeJwt(token);
  expect(exp! - iat!).toBe(30 * 86_400);
});

test('--expires sets the lifetime', () => {
  const r = sluice([...CREATE, '--expires', '12h'], { AUTH_JWT_SECRET: SECRET });
  expect(r.code).toBe(0);
  const { iat, exp } = decodeJwt(lastLine(r.stdout));
  expect(exp! - iat!).toBe(12 * 3600);
});

test('--expires abc prints one line naming the accepted format and exits 2', () => {
  const r = sluice([...CREATE, '--expires', 'abc'], { AUTH_JWT_SECRET: SECRET });
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expectOneLine(r.stderr);
  expect(r.stderr).toContain('--expires "abc" is not a whole number and a unit');
});

test.each([[''], ['a/b'], ['..x'], ['.dot']])(
  '--workspace %p is refused in one line, exit 2',
  (workspace) => {
    const r = sluice(['token', 'create', '--workspace', workspace, '--user', 'ada', '--role', 'admin'], {
      AUTH_JWT_SECRET: SECRET,
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expectOneLine(r.stderr);
    expect(r.stderr).toMatch(/--workspace|missing --workspace/);
  },
);

test.each([
  ['an unknown flag', [...CREATE, '--bogus'], "Unknown option '--bogus'"],
  ['a stray argument', [...CREATE, 'extra'], "Unexpected argument 'extra'"],
  ['an option without its value', [...CREATE, '--expires'], "'--expires <value>' argument missing"],
  ['no subcommand', ['token'], 'expected a subcommand: create'],
  ['an unknown subcommand', ['token', 'mint'], 'unknown subcommand "mint"'],
  ['a missing option', ['token', 'create', '--user', 'u'], 'missing --workspace, --role'],
  [
    'a wrong role',
    ['token', 'create', '--workspace', 'w', '--user', 'u', '--role', 'root'],
    'admin or member',
  ],
])('%s prints one line and exits 2', (_, args, message) => {
  const r = sluice(args, { AUTH_JWT_SECRET: SECRET });
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
  expectOneLine(r.stderr);
  expect(r.stderr).toContain(message);
});

test.each([
  ['token', 'create', '--help'],
  ['token', 'create', '--workspace', 'w', '-h'],
  ['token', '--help'],
  ['token', 'help'],
])('%s %s %s prints the usage, with --expires and the variables, and exits 0', (...args) => {
  const r = sluice(args);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('usage: sluice token create');
  expect(r.stdout).toContain('--expires D');
  expect(r.stdout).toContain('e.g. 90m, 12h, 30d, 52w');
  expect(r.stdout).toContain('AUTH_JWT_SECRET');
  expect(r.stdout).toContain('SLUICE_DATA_DIR');
});

test('outside a standalone data dir it refuses, naming the variables, and creates nothing', () => {
  const elsewhere = join(cwd, 'no-such-dir');
  const envs: Record<string, string>[] = [{}, { SLUICE_DATA_DIR: elsewhere }, { SLUICE_DATA_DIR: cwd }];
  for (const env of envs) {
    const r = sluice(CREATE, env);
    expect({ env, code: r.code, stdout: r.stdout }).toEqual({ env, code: 2, stdout: '' });
    expectOneLine(r.stderr);
    expect(r.stderr).toContain('AUTH_JWT_SECRET');
    expect(r.stderr).toContain('SLUICE_DATA_DIR');
  }
  expect(existsSync(elsewhere)).toBe(false);
  expect(readdirSync(cwd)).toEqual([]);
});

test('in a standalone data dir it signs with the secret the server generated there', async () => {
  const dataDir = join(cwd, 'data');
  const { secrets, path } = loadOrCreateSecrets(dataDir); // what `sluice server --standalone` does first
  const r = sluice(CREATE, { SLUICE_DATA_DIR: dataDir });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(path);
  await expect(verifyUserToken(secrets.authJwtSecret, lastLine(r.stdout))).resolves.toMatchObject({
    user: 'ada',
  });
  expect(statSync(path).mode & 0o777).toBe(0o600);
});
