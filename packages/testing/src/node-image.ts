import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type Docker from 'dockerode';
import { busyboxRootfs } from './docker-images';
import { dir, hostFile, importRootfs, type RootfsEntry } from './rootfs';

/**
 * A Node.js image made of this machine's files, for tests whose task image
 * runs `node` (a connector, say): busybox for a shell, this host's `node` at
 * /usr/local/bin/node and the shared libraries `ldd` lists for it at their
 * own paths. No registry needed; reused while its content is unchanged.
 */
export const NODE_IMAGE = 'sluice-test/node:1';

function nodeLibraries(nodePath: string): RootfsEntry[] {
  const ldd = execFileSync('ldd', [nodePath], { encoding: 'utf8' });
  const paths = new Set<string>();
  for (const line of ldd.split('\n')) {
    // "libstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x…)" or "/lib64/ld-linux-x86-64.so.2 (0x…)"
    const match = /(\/\S+)\s+\(0x/.exec(line);
    if (match?.[1]) paths.add(match[1]);
  }
  const entries: RootfsEntry[] = [];
  const dirs = new Set<string>();
  for (const path of paths) {
    const parent = dirname(path).replace(/^\//, '');
    if (!dirs.has(parent)) {
      dirs.add(parent);
      entries.push(dir(parent));
    }
    entries.push(hostFile(`${parent}/${basename(path)}`, realpathSync(path)));
  }
  return entries;
}

export async function ensureNodeImage(docker: Docker): Promise<string> {
  const node = realpathSync(process.execPath);
  return importRootfs(
    docker,
    NODE_IMAGE,
    [
      ...busyboxRootfs(),
      dir('usr'),
      dir('usr/local'),
      dir('usr/local/bin'),
      hostFile('usr/local/bin/node', node),
      ...nodeLibraries(node),
    ],
    ['ENV PATH=/usr/local/bin:/bin'],
  );
}
