import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { insertSnapshot, readNamespaceFiles, type NamespaceKey, type Queryable } from '@sluice/store';

export interface SnapshotEntry {
  path: string;
  content: Buffer;
}

/**
 * A deterministic tar.gz of the given files: sorted paths, fixed mtime and
 * mode, no owner names, and gzip without a timestamp. The same files give the
 * same bytes, so the sha256 of the bundle is its content address.
 */
export async function buildBundle(entries: SnapshotEntry[]): Promise<Buffer> {
  const tarball = pack();
  const chunks: Buffer[] = [];
  tarball.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    tarball.on('end', () => resolve());
    tarball.on('error', reject);
  });
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const entry of sorted) {
    await new Promise<void>((resolve, reject) =>
      tarball.entry(
        { name: entry.path, size: entry.content.length, mode: 0o644, mtime: new Date(0), uid: 0, gid: 0 },
        entry.content,
        (err) => (err ? reject(err) : resolve()),
      ),
    );
  }
  tarball.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks), { level: 6 });
}

export interface PinnedSnapshot {
  id: string;
  size: number;
}

/**
 * Pin a namespace's files plus the flow (at `flows/<flow>.yaml`) as one
 * content-addressed snapshot. Identical content is stored once.
 */
export async function pinSnapshot(
  db: Queryable,
  ns: NamespaceKey,
  flow: { flowId: string; source: string },
): Promise<PinnedSnapshot> {
  const files = await readNamespaceFiles(db, ns);
  const flowPath = `flows/${flow.flowId}.yaml`;
  const entries: SnapshotEntry[] = files
    .filter((f) => f.path !== flowPath)
    .map((f) => ({ path: f.path, content: f.content }));
  entries.push({ path: flowPath, content: Buffer.from(flow.source, 'utf8') });
  const bundle = await buildBundle(entries);
  const id = createHash('sha256').update(bundle).digest('hex');
  await insertSnapshot(db, { id, bundle });
  return { id, size: bundle.length };
}
