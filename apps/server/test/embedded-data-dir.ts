import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, freePort, startApp, type AppProcess } from '@sluice/testing';

export const SLUICE = join(__dirname, '..', '..', '..', 'bin', 'sluice.cjs');

/**
 * A fresh SLUICE_DATA_DIR. Its parent is made traversable: as root, the
 * embedded PostgreSQL runs as the postgres user, who must reach it.
 */
export function newDataDir(): string {
  const parent = mkdtempSync(join(tmpdir(), 'sluice-embedded-'));
  chmodSync(parent, 0o755);
  return join(parent, 'data');
}

export interface EmbeddedServer extends AppProcess {
  publicUrl: string;
  internalUrl: string;
}

function serverEnv(dataDir: string, httpPort: number, internalPort: number): Record<string, string> {
  return {
    ...baseEnv(),
    SLUICE_DATA_DIR: dataDir,
    HTTP_SERVER_ADDR: `127.0.0.1:${httpPort}`,
    INTERNAL_HTTP_SERVER_ADDR: `127.0.0.1:${internalPort}`,
    SLUICE_QUEUE_POLL_INTERVAL: '250ms',
  };
}

/**
 * `sluice server --standalone` with neither a database URL nor secrets: the
 * embedded PostgreSQL and generated secrets under `dataDir`, as a new user
 * runs it. Resolves once it says it started (or, with `ready: false`, at once).
 */
export async function startEmbedded(
  dataDir: string,
  opts: { ready?: boolean } = {},
): Promise<EmbeddedServer> {
  const [httpPort, internalPort] = [await freePort(), await freePort()];
  const app = await startApp({
    main: SLUICE,
    args: ['server', '--standalone'],
    env: serverEnv(dataDir, httpPort, internalPort),
    ...(opts.ready === false ? {} : { readyWhen: '"server started"', readyTimeoutMs: 90_000 }),
  });
  return {
    ...app,
    publicUrl: `http://127.0.0.1:${httpPort}`,
    internalUrl: `http://127.0.0.1:${internalPort}`,
  };
}

/** An admin token from `sluice token create`, signed with the secret generated under `dataDir`. */
export function tokenFor(dataDir: string): string {
  const r = spawnSync(
    process.execPath,
    [SLUICE, 'token', 'create', '--workspace', 'w', '--user', 'ada', '--role', 'admin'],
    { env: { ...baseEnv(), SLUICE_DATA_DIR: dataDir }, encoding: 'utf8', timeout: 30_000 },
  );
  if (r.status !== 0) throw new Error(`sluice token create: ${r.status} ${r.stderr}`);
  return r.stdout.trimEnd().split('\n').pop()!;
}

export async function isReady(internalUrl: string): Promise<boolean> {
  try {
    return (await fetch(`${internalUrl}/ready`)).status === 200;
  } catch {
    return false;
  }
}

export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
