import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock, ensureDataDir, LOCK_FILE } from '@sluice/bootstrap';

const newDir = () => mkdtempSync(join(tmpdir(), 'sluice-lock-'));
const lockOf = (dir: string) => join(dir, LOCK_FILE);

describe('the data dir lock (server.pid)', () => {
  it('names this process and is removed on release', () => {
    const dir = newDir();
    const lock = acquireDataDirLock(dir);
    expect(readFileSync(lockOf(dir), 'utf8').split('\n')[0]).toBe(String(process.pid));
    lock.release();
    expect(() => readFileSync(lockOf(dir))).toThrow(/ENOENT/);
  });

  it('is refused while its holder runs, naming the PID and the data dir', async () => {
    const dir = newDir();
    const holder = spawn('sleep', ['30']);
    try {
      writeFileSync(lockOf(dir), `${holder.pid}\n`);
      expect(() => acquireDataDirLock(dir)).toThrow(
        `SLUICE_DATA_DIR ${dir} is in use by the sluice server with PID ${holder.pid}`,
      );
      expect(readFileSync(lockOf(dir), 'utf8')).toBe(`${holder.pid}\n`);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('is taken over from a holder that has exited, saying whose it was', () => {
    const dir = newDir();
    const dead = spawnSync('true').pid;
    writeFileSync(lockOf(dir), `${dead}\n`);
    const stale: number[] = [];
    const lock = acquireDataDirLock(dir, (pid) => stale.push(pid));
    expect(stale).toEqual([dead]);
    expect(readFileSync(lockOf(dir), 'utf8').split('\n')[0]).toBe(String(process.pid));
    lock.release();
  });

  it('is taken over when its PID now belongs to a process started later (a reused PID)', () => {
    const dir = newDir();
    // This very process, but with a start time that is not its own.
    writeFileSync(lockOf(dir), `${process.pid}\n1\n`);
    const lock = acquireDataDirLock(dir);
    expect(readFileSync(lockOf(dir), 'utf8').split('\n')[1]).not.toBe('1');
    lock.release();
  });

  it('is left alone on release once another server took it over', () => {
    const dir = newDir();
    const lock = acquireDataDirLock(dir);
    writeFileSync(lockOf(dir), '1\n');
    lock.release();
    expect(readFileSync(lockOf(dir), 'utf8')).toBe('1\n');
  });
});

describe('ensureDataDir', () => {
  it('creates the data dir, and names SLUICE_DATA_DIR when the path is a file', () => {
    const dir = join(newDir(), 'a', 'b');
    ensureDataDir(dir);
    const file = join(dir, 'file');
    writeFileSync(file, '');
    expect(() => ensureDataDir(file)).toThrow(`SLUICE_DATA_DIR ${file} is not a directory`);
    expect(() => ensureDataDir(join(file, 'below'))).toThrow(
      `SLUICE_DATA_DIR ${join(file, 'below')} is not a directory`,
    );
  });
});
