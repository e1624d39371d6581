import { createReadStream } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { RunnerLimits } from '@sluice/protocol';

export interface ArtifactFile {
  /** Path relative to $SLUICE_ARTIFACTS, with `/` separators. */
  name: string;
  path: string;
  size: number;
}

export interface ArtifactSelection {
  accepted: ArtifactFile[];
  /** One message per skipped entry, for the task's log. */
  skipped: string[];
}

/**
 * Picks the artifacts to upload: every regular file under `dir` (symlinks and
 * other special files are skipped), in name order, each within
 * `artifactMaxBytes` and all together within `artifactsTotalMaxBytes`.
 */
export async function selectArtifacts(
  dir: string,
  limits: Pick<RunnerLimits, 'artifactMaxBytes' | 'artifactsTotalMaxBytes'>,
): Promise<ArtifactSelection> {
  const files: ArtifactFile[] = [];
  const skipped: string[] = [];
  await walk(dir, dir, files, skipped);
  files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const accepted: ArtifactFile[] = [];
  let total = 0;
  for (const file of files) {
    if (file.size > limits.artifactMaxBytes) {
      skipped.push(
        `artifact ${file.name} skipped: ${file.size} bytes is over the limit of ${limits.artifactMaxBytes} per artifact`,
      );
    } else if (total + file.size > limits.artifactsTotalMaxBytes) {
      skipped.push(
        `artifact ${file.name} skipped: it would bring the artifacts to ${total + file.size} bytes, over the limit of ${limits.artifactsTotalMaxBytes}`,
      );
    } else {
      total += file.size;
      accepted.push(file);
    }
  }
  return { accepted, skipped };
}

/** A fresh stream per call, so the client can resend a failed upload. */
export function openArtifact(file: ArtifactFile): () => Readable {
  return () => createReadStream(file.path);
}

async function walk(root: string, dir: string, files: ArtifactFile[], skipped: string[]): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const name = relative(root, path).split(sep).join('/');
    if (entry.isDirectory()) {
      await walk(root, path, files, skipped);
    } else if (entry.isFile()) {
      files.push({ name, path, size: (await lstat(path)).size });
    } else {
      skipped.push(`artifact ${name} skipped: not a regular file`);
    }
  }
}
