import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO = resolve(__dirname, '..', '..', '..');
const SLUICE = join(REPO, 'bin', 'sluice.cjs');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A home of its own (the config file of `sluice login` goes under it), without SLUICE_* from the test's env. */
export function freshHome(): string {
  return mkdtempSync(join(tmpdir(), 'sluice-cli-home-'));
}

/** `node bin/sluice.cjs <args>` as a child process: the binary users run. */
export function sluice(
  args: string[],
  env: Record<string, string>,
  options: { stdin?: string } = {},
): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [SLUICE, ...args], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}
