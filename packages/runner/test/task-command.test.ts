import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveTaskCommand } from '../src/task-command';

let bin: string;
beforeAll(async () => {
  bin = await mkdtemp(join(tmpdir(), 'fake-bin-'));
  await writeFile(join(bin, 'uv'), '#!/bin/sh\n');
  await chmod(join(bin, 'uv'), 0o755);
});
afterAll(async () => {
  await rm(bin, { recursive: true, force: true });
});

const python = { type: 'script', interpreter: 'python', script: 'print(1)' } as const;

test('a python script goes through `uv run --script` when uv is on PATH', () => {
  const command = resolveTaskCommand(python, '/work', `/nowhere:${bin}`);
  expect(command.argv).toEqual(['uv', 'run', '--script', '/work/.sluice-task.py']);
  expect(command.scriptFile).toEqual({ path: '/work/.sluice-task.py', body: 'print(1)' });
});

test('without uv it falls back to python3; other interpreters run the file directly', () => {
  expect(resolveTaskCommand(python, '/work', '/nowhere').argv).toEqual(['python3', '/work/.sluice-task.py']);
  expect(resolveTaskCommand({ type: 'script', interpreter: 'bun', script: '' }, '/w', bin).argv).toEqual([
    'bun',
    '/w/.sluice-task.ts',
  ]);
  expect(resolveTaskCommand({ type: 'command', command: ['echo', 'a b'] }, '/w', bin)).toEqual({
    argv: ['echo', 'a b'],
    scriptFile: null,
  });
});
