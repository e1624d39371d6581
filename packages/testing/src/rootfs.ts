import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type Docker from 'dockerode';
import { pack } from 'tar-stream';

/** One entry of an image's root filesystem, named without a leading slash (`bin/sh`). */
export type RootfsEntry =
  | { type: 'directory'; name: string; mode: number }
  | { type: 'file'; name: string; mode: number; content: Buffer }
  | { type: 'symlink'; name: string; linkname: string };

/** A directory entry. */
export const dir = (name: string, mode = 0o755): RootfsEntry => ({ type: 'directory', name, mode });

/** A file entry whose content is the host file at `hostPath` (symlinks followed). */
export function hostFile(name: string, hostPath: string, mode = 0o755): RootfsEntry {
  return { type: 'file', name, mode, content: readFileSync(hostPath) };
}

export const textFile = (name: string, text: string, mode = 0o644): RootfsEntry => ({
  type: 'file',
  name,
  mode,
  content: Buffer.from(text),
});

/** A hash of everything that ends up in the image, so an unchanged rootfs is not imported again. */
export function rootfsHash(entries: RootfsEntry[], changes: string[]): string {
  const hash = createHash('sha256');
  for (const change of changes) hash.update(`change ${change}\n`);
  for (const entry of entries) {
    hash.update(`${entry.type} ${entry.name}\n`);
    if (entry.type === 'symlink') hash.update(`-> ${entry.linkname}\n`);
    else hash.update(`mode ${entry.mode}\n`);
    if (entry.type === 'file') hash.update(entry.content);
  }
  return hash.digest('hex').slice(0, 16);
}

const HASH_LABEL = 'sluice.io/test-image-hash';

/**
 * Tags `tag` as an image holding exactly `entries` (like `docker import`, no
 * registry involved). When the image already carries the same content hash it
 * is reused as it is, so reruns cost one inspect.
 */
export async function importRootfs(
  docker: Docker,
  tag: string,
  entries: RootfsEntry[],
  changes: string[] = [],
): Promise<string> {
  const contentHash = rootfsHash(entries, changes);
  const existing = await docker
    .getImage(tag)
    .inspect()
    .catch(() => undefined);
  if (existing?.Config?.Labels?.[HASH_LABEL] === contentHash) return tag;

  const [repo, version] = splitTag(tag);
  const progress = await docker.importImage(packRootfs(entries), {
    repo,
    tag: version,
    changes: [...changes, `LABEL ${HASH_LABEL}=${contentHash}`],
  });
  await followImport(docker, progress, tag);
  return tag;
}

function packRootfs(entries: RootfsEntry[]): NodeJS.ReadableStream {
  const tar = pack();
  for (const entry of entries) {
    if (entry.type === 'file') tar.entry({ name: entry.name, mode: entry.mode }, entry.content);
    else if (entry.type === 'directory') tar.entry({ name: entry.name, type: 'directory', mode: entry.mode });
    else tar.entry({ name: entry.name, type: 'symlink', linkname: entry.linkname, mode: 0o777 });
  }
  tar.finalize();
  return tar as unknown as NodeJS.ReadableStream;
}

function followImport(docker: Docker, progress: NodeJS.ReadableStream, tag: string): Promise<void> {
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(
      progress,
      (err: Error | null, events: Array<{ error?: string }>) => {
        const failed = err?.message ?? events.find((event) => event.error)?.error;
        if (failed) reject(new Error(`importing test image ${tag} failed: ${failed}`));
        else resolve();
      },
      () => undefined,
    );
  });
}

function splitTag(tag: string): [string, string] {
  const colon = tag.lastIndexOf(':');
  if (colon <= 0 || tag.includes('/', colon)) throw new Error(`test image tag ${tag} must be repo:version`);
  return [tag.slice(0, colon), tag.slice(colon + 1)];
}
