import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * docker/compose.yaml as Compose reads it (`config`: interpolated, nothing started): the
 * owner ID the standalone server gets from the shell, from the .env beside the file, or
 * `sluice` (docs/images.md, "Running"). Compose v2 (`docker compose`) when installed, else
 * v1 (`docker-compose`, Debian 12's 1.29: `apt-get install docker-compose`; .ci/run installs it).
 */

const REPO = join(__dirname, '..', '..', '..');

function findCompose(): string[] | undefined {
  for (const command of [['docker', 'compose'], ['docker-compose']]) {
    const [bin, ...args] = command as [string, ...string[]];
    if (spawnSync(bin, [...args, 'version'], { stdio: 'ignore' }).status === 0) return command;
  }
  return undefined;
}

const compose = findCompose();

interface Config {
  code: number;
  stdout: string;
  stderr: string;
}

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-compose-'));
  // The layout the docs give: the compose file in docker/, its .env beside it.
  mkdirSync(join(dir, 'docker'));
  copyFileSync(join(REPO, 'docker', 'compose.yaml'), join(dir, 'docker', 'compose.yaml'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** `compose -f docker/compose.yaml config` run from `dir` with exactly `env` (nothing inherited). */
function config(env: Record<string, string>, dotEnv?: string): Promise<Config> {
  if (dotEnv !== undefined) writeFileSync(join(dir, 'docker', '.env'), dotEnv);
  const [bin, ...args] = compose as [string, ...string[]];
  const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir };
  return new Promise((resolve) => {
    execFile(
      bin,
      [...args, '-f', join(dir, 'docker', 'compose.yaml'), 'config'],
      { cwd: dir, env: { ...base, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A variable of the server's environment in `config`'s YAML (v1 and v2 print it the same way). */
function serverEnv(result: Config, name: string): string {
  expect(result).toMatchObject({ code: 0 });
  const line = new RegExp(`^\\s+${name}:\\s*(.*)$`, 'm').exec(result.stdout);
  if (!line) throw new Error(`no ${name} in:\n${result.stdout}`);
  return unquote(line[1] ?? '');
}

const ownerId = (result: Config) => serverEnv(result, 'DOCKER_EXECUTOR_OWNER_ID');

/** The name of the stack's default network (top-level `networks:`). */
function defaultNetwork(result: Config): string {
  const match = /^networks:\n\s+default:\n\s+name:\s*(.*)$/m.exec(result.stdout);
  if (!match) throw new Error(`no default network name in:\n${result.stdout}`);
  return unquote(match[1] ?? '');
}

const unquote = (value: string) => value.trim().replace(/^(['"])(.*)\1$/, '$2');

const GID = { DOCKER_GID: '999' };

if (!compose) {
  describe('docker/compose.yaml', () => {
    it.skip('needs Compose: neither `docker compose` (v2) nor `docker-compose` (v1: apt-get install docker-compose) is installed', () => {});
  });
}

(compose ? describe : describe.skip)(
  `docker/compose.yaml through ${(compose ?? []).join(' ')} config`,
  () => {
    it('gives the server the owner ID `sluice` when DOCKER_EXECUTOR_OWNER_ID is unset', async () => {
      expect(ownerId(await config(GID))).toBe('sluice');
    });

    it('gives `sluice` when DOCKER_EXECUTOR_OWNER_ID is empty in the shell', async () => {
      expect(ownerId(await config({ ...GID, DOCKER_EXECUTOR_OWNER_ID: '' }))).toBe('sluice');
    });

    it("takes the shell's DOCKER_EXECUTOR_OWNER_ID", async () => {
      expect(ownerId(await config({ ...GID, DOCKER_EXECUTOR_OWNER_ID: 'team-a' }))).toBe('team-a');
    });

    it('takes the DOCKER_EXECUTOR_OWNER_ID of the .env beside the compose file', async () => {
      expect(ownerId(await config(GID, 'DOCKER_EXECUTOR_OWNER_ID=from-dotenv\n'))).toBe('from-dotenv');
    });

    it('gives `sluice` with .env.dist copied as it is (the owner ID left empty)', async () => {
      const dist = readFileSync(join(REPO, '.env.dist'), 'utf8');
      expect(ownerId(await config(GID, dist))).toBe('sluice');
    });

    it("prefers the shell's value to the .env's", async () => {
      const result = await config(
        { ...GID, DOCKER_EXECUTOR_OWNER_ID: 'from-shell' },
        'DOCKER_EXECUTOR_OWNER_ID=from-dotenv\n',
      );
      expect(ownerId(result)).toBe('from-shell');
    });

    it("puts task containers on the stack's network, named after the owner ID, and points them at the server", async () => {
      for (const [env, network] of [
        [GID, 'sluice-sluice'],
        [{ ...GID, DOCKER_EXECUTOR_OWNER_ID: 'staging' }, 'sluice-staging'],
      ] as const) {
        const result = await config(env);
        expect(defaultNetwork(result)).toBe(network);
        expect(serverEnv(result, 'DOCKER_EXECUTOR_NETWORK')).toBe(network);
        // The service name on that network; 127.0.0.1 would be the task container itself.
        expect(serverEnv(result, 'SLUICE_API_URL')).toBe('http://server:8081');
      }
    });

    it('refuses to run without DOCKER_GID, naming it', async () => {
      const result = await config({});
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/DOCKER_GID/);
    });
  },
);
