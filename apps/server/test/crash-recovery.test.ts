import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresBinaries, postmasterPid } from '@sluice/bootstrap';
import { apiClient, ended, freePort, isProcessAlive } from '@sluice/testing';
import {
  isReady,
  newDataDir,
  startEmbedded,
  tokenFor,
  waitUntil,
  type EmbeddedServer,
} from './embedded-data-dir';

// A standalone server with its embedded PostgreSQL, as a new user runs it, and
// the ways it has been left behind: killed with -9, its PostgreSQL orphaned,
// or its data dir wanted by a second server.

const FLOW = `
tasks:
  - id: hello
    type: command
    command: ["sh", "-c", "echo hello"]
`;

let template: string;
const servers: EmbeddedServer[] = [];
const orphans: number[] = [];

async function start(dataDir: string, opts?: { ready?: boolean }): Promise<EmbeddedServer> {
  const server = await startEmbedded(dataDir, opts);
  servers.push(server);
  return server;
}

/** A data dir already initialised (initdb takes seconds), with its secrets: a copy of the template. */
function copyOfTemplate(): string {
  const dir = newDataDir();
  execFileSync('cp', ['-a', template, dir]);
  return dir;
}

const pgDirOf = (dataDir: string) => join(dataDir, 'postgres');

beforeAll(async () => {
  template = newDataDir();
  const first = await start(template);
  expect(await first.stop('SIGTERM')).toBe(0);
}, 120_000);

afterAll(async () => {
  for (const server of servers) await server.stop('SIGKILL');
  for (const pid of orphans) if (isProcessAlive(pid)) process.kill(pid, 'SIGQUIT');
});

describe('a standalone server on its embedded PostgreSQL', () => {
  it('killed with -9 takes its PostgreSQL with it, and starts again on the same data dir with its data', async () => {
    const dataDir = copyOfTemplate();
    const token = tokenFor(dataDir);
    let server = await start(dataDir);
    expect((await apiClient(server.publicUrl, token).putFlow('demo', 'hello', FLOW)).status).toBe(200);
    const postgres = postmasterPid(pgDirOf(dataDir))!;
    expect(isProcessAlive(postgres)).toBe(true);

    server.proc.kill('SIGKILL');
    await server.exited;
    await waitUntil('the embedded PostgreSQL to stop', () => !isProcessAlive(postgres), 20_000);

    server = await start(dataDir);
    expect(server.output()).toContain('is no longer running');
    expect(await isReady(server.internalUrl)).toBe(true);
    const api = apiClient(server.publicUrl, token);
    expect((await api.call('GET', '/api/v1/namespaces/demo/flows/hello')).status).toBe(200);
    const run = await api.waitFor(await api.run('demo', 'hello'), ended);
    expect(run.state).toBe('SUCCEEDED');

    const restarted = postmasterPid(pgDirOf(dataDir))!;
    expect(await server.stop('SIGTERM')).toBe(0);
    // A clean stop stops PostgreSQL too and leaves the data dir unclaimed.
    expect(isProcessAlive(restarted)).toBe(false);
    expect(existsSync(join(dataDir, 'server.pid'))).toBe(false);
  }, 180_000);

  it('stops a leftover PostgreSQL of a dead server on its data dir and starts cleanly', async () => {
    const dataDir = copyOfTemplate();
    const pgDir = pgDirOf(dataDir);
    // What a dead server can leave: its PostgreSQL still running (here started by hand) ...
    const root = process.getuid?.() === 0;
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
    const port = await freePort();
    const started = spawnSync(
      postgresBinaries().pg_ctl,
      [
        '-D',
        pgDir,
        '-l',
        join(tmpdir(), `orphan-${port}.log`),
        '-o',
        `-p ${port} -c listen_addresses=127.0.0.1`,
        '-w',
        'start',
      ],
      { encoding: 'utf8', timeout: 60_000, ...(root ? { uid: id('-u'), gid: id('-g') } : {}) },
    );
    expect({ status: started.status, stderr: started.stderr }).toEqual({ status: 0, stderr: '' });
    const orphan = postmasterPid(pgDir)!;
    orphans.push(orphan);
    expect(isProcessAlive(orphan)).toBe(true);
    // ... and its server.pid, naming a process that has exited.
    const dead = spawnSync('true').pid;
    writeFileSync(join(dataDir, 'server.pid'), `${dead}\n`);

    const server = await start(dataDir);
    expect(isProcessAlive(orphan)).toBe(false);
    expect(server.output()).toContain(`stopped a leftover embedded PostgreSQL (PID ${orphan}`);
    expect(server.output()).toContain(`its server (PID ${dead}) is no longer running`);
    expect(await isReady(server.internalUrl)).toBe(true);
    const api = apiClient(server.publicUrl, tokenFor(dataDir));
    expect((await api.putFlow('demo', 'hello', FLOW)).status).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
  }, 180_000);

  it('refuses a data dir in use by a live server, naming its PID, and leaves that server alone', async () => {
    const dataDir = copyOfTemplate();
    const first = await start(dataDir);
    const second = await start(dataDir, { ready: false });
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(
      `sluice server: SLUICE_DATA_DIR ${dataDir} is in use by the sluice server with PID ${first.proc.pid}`,
    );
    expect(await isReady(first.internalUrl)).toBe(true);
    const api = apiClient(first.publicUrl, tokenFor(dataDir));
    expect((await api.putFlow('demo', 'hello', FLOW)).status).toBe(200);
    expect(existsSync(join(dataDir, 'server.pid'))).toBe(true);
    expect(await first.stop('SIGTERM')).toBe(0);
  }, 180_000);
});

describe('a start-up error', () => {
  it('of a data dir that is a file says so', async () => {
    const file = `${newDataDir()}-file`;
    writeFileSync(file, 'not a directory\n');
    const server = await start(file, { ready: false });
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain(`sluice server: SLUICE_DATA_DIR ${file} is not a directory`);
    expect(server.output()).not.toMatch(/undefined/);
  });

  it("of PostgreSQL itself prints PostgreSQL's own words, and leaves nothing running", async () => {
    const dataDir = copyOfTemplate();
    appendFileSync(join(pgDirOf(dataDir), 'postgresql.conf'), '\nthis is not a setting\n');
    const server = await start(dataDir, { ready: false });
    expect(await server.exited).toBe(1);
    const output = server.output();
    expect(output).toContain(
      `sluice server: could not start the embedded PostgreSQL under ${pgDirOf(dataDir)}`,
    );
    expect(output).toMatch(/syntax error in file ".*postgresql\.conf" line \d+/);
    expect(output).not.toMatch(/undefined/);
    expect(postmasterPid(pgDirOf(dataDir))).toBeUndefined();
    expect(existsSync(join(dataDir, 'server.pid'))).toBe(false);
  }, 60_000);
});
