import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyUserToken } from '@sluice/auth';
import { loadOrCreateSecrets } from '@sluice/bootstrap';
import { createTestDatabase, startServer, type TestDatabase } from '@sluice/testing';

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

/** Each command as a user types it, and variables its --help must list. */
const COMMANDS: Array<{ args: string[]; lists: string[] }> = [
  {
    args: ['server'],
    lists: ['SLUICE_DATABASE_URL (or DB_DSN) [secret]', 'HTTP_SERVER_ADDR [default: 0.0.0.0:8080]'],
  },
  {
    args: ['server', '--standalone'],
    lists: ['SLUICE_DATA_DIR [default: ./.sluice]', 'SLUICE_MASTER_KEYS [secret]'],
  },
  { args: ['jobs'], lists: ['SLUICE_DATABASE_URL', 'PIPELINE_HEARTBEAT_TIMEOUT [default: 30s]'] },
  {
    args: ['docker-executor'],
    lists: ['EXECUTOR_API_URL', 'EXECUTOR_API_TOKEN', 'DOCKER_EXECUTOR_OWNER_ID'],
  },
  { args: ['k8s-executor'], lists: ['EXECUTOR_API_URL', 'K8S_EXECUTOR_NAMESPACE'] },
  { args: ['exec'], lists: ['SLUICE_RUN_TOKEN [secret]', 'SLUICE_API_URL', 'SLUICE_TASK_RUN_ID'] },
  { args: ['runner-install'], lists: ['runner-install DIR', 'SLUICE_RUN_TOKEN'] },
  { args: ['token', 'create'], lists: ['--expires', 'AUTH_JWT_SECRET [secret]', 'SLUICE_DATA_DIR'] },
];

describe('every command (issue 12: the CLI says what is true)', () => {
  it.each(COMMANDS)('$args --help exits 0 and lists its variables', ({ args, lists }) => {
    const r = sluice([...args, '--help']);
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
    for (const variable of lists) expect(r.stdout).toContain(variable);
  });

  it('server --help says where process tasks run', () => {
    expect(sluice(['server', '--help']).stdout).toContain("Process tasks run on this server's host");
  });

  it.each(COMMANDS)('$args --bogus exits 2 with one line on stderr', ({ args }) => {
    const r = sluice([...args, '--bogus']);
    expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^[^\n]*--bogus[^\n]*\n$/);
  });

  it.each([
    { case: 'an unknown command', args: ['serve'] },
    { case: 'a missing option value', args: ['token', 'create', '--workspace'] },
    {
      case: 'a bad option value',
      args: ['token', 'create', '--workspace', 'w', '--user', 'u', '--role', 'admin', '--expires', 'abc'],
    },
    { case: 'runner-install without its directory', args: ['runner-install'] },
  ])('$case exits 2 with one line on stderr', ({ args }) => {
    const r = sluice(args, { AUTH_JWT_SECRET: SECRET });
    expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^sluice[^\n]*\n$/);
  });
});

describe('the start log (issue 12)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('shows the addresses actually bound, and they are the ones that answer', async () => {
    const server = await startServer(db.url, {
      HTTP_SERVER_ADDR: '0.0.0.0:0',
      INTERNAL_HTTP_SERVER_ADDR: '0.0.0.0:0',
      LOG_LEVEL: 'info',
    });
    try {
      const started = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.message === 'server started');
      expect(started).toMatchObject({
        publicAddress: expect.stringMatching(/^0\.0\.0\.0:[1-9]\d*$/),
        internalAddress: expect.stringMatching(/^0\.0\.0\.0:[1-9]\d*$/),
      });
      const portOf = (address: unknown) => Number(String(address).split(':').pop());
      const publicPort = portOf(started!.publicAddress);
      const internalPort = portOf(started!.internalAddress);
      expect(started!.public).toBe(`http://127.0.0.1:${publicPort}`);
      expect(started!.internal).toBe(`http://127.0.0.1:${internalPort}`);
      // Each logged port is the listener it names: the public API wants a token, the internal one serves /live.
      expect((await fetch(`http://127.0.0.1:${publicPort}/api/v1/executors`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${internalPort}/live`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
