import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from 'tar';
import { extractSnapshot, SnapshotRejectedError } from '../src/snapshot';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'snapshot-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function bundle(cwd: string, entries: string[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of create({ cwd, gzip: true, portable: true }, entries))
    chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

test('files, directories and symlinks inside the bundle are extracted', async () => {
  const source = join(dir, 'src');
  await mkdir(join(source, 'flows'), { recursive: true });
  await writeFile(join(source, 'flows', 'etl.yaml'), 'tasks: []\n');
  await symlink('flows/etl.yaml', join(source, 'current.yaml'));
  const target = join(dir, 'work');
  await mkdir(target);

  await extractSnapshot(await bundle(source, ['flows', 'current.yaml']), target);

  expect(await readFile(join(target, 'current.yaml'), 'utf8')).toBe('tasks: []\n');
});

test('a symlink pointing out of the work dir refuses the whole bundle', async () => {
  const source = join(dir, 'src');
  await mkdir(source);
  await symlink('../../etc', join(source, 'etc'));
  await writeFile(join(source, 'ok.txt'), 'ok\n');
  const target = join(dir, 'work');
  await mkdir(target);

  const error = await extractSnapshot(await bundle(source, ['ok.txt', 'etc']), target).catch((e) => e);

  expect(error).toBeInstanceOf(SnapshotRejectedError);
  expect(error.message).toBe('snapshot bundle refused: etc: symlink target ../../etc escapes the work dir');
  expect(existsSync(join(target, 'etc'))).toBe(false);
});
