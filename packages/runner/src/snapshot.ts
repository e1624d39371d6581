import { posix } from 'node:path';
import { extract } from 'tar';

/**
 * Entry types a namespace bundle may hold. Hard links are refused: link(2) follows symlinks in
 * its target, so a lexical check cannot keep one inside. Devices and FIFOs have no place here.
 */
const ALLOWED_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink']);

export class SnapshotRejectedError extends Error {
  constructor(problems: string[]) {
    const shown = problems.slice(0, 5).join('; ');
    super(
      `snapshot bundle refused: ${shown}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''}`,
    );
    this.name = 'SnapshotRejectedError';
  }
}

/**
 * Extracts a snapshot bundle (tar.gz) into `dir`. Entries that would land
 * outside `dir` — absolute paths, `..` segments, links pointing out — are
 * refused and fail the whole extraction, as do unexpected entry types. tar
 * itself refuses to write through a symlink. File owners are not restored,
 * even when the runner is root.
 */
export async function extractSnapshot(bundle: Buffer, dir: string): Promise<void> {
  const problems: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const unpack = extract({
      cwd: dir,
      strict: true,
      preserveOwner: false,
      filter: (path, entry) => {
        const problem = 'type' in entry ? entryProblem(path, entry.type, entry.linkpath) : null;
        if (problem) problems.push(problem);
        return problem === null;
      },
    });
    unpack.on('error', reject);
    unpack.on('close', () => resolve());
    unpack.end(bundle);
  });
  if (problems.length > 0) throw new SnapshotRejectedError(problems);
}

function entryProblem(path: string, type: string, linkpath: string | undefined): string | null {
  if (!ALLOWED_TYPES.has(type)) return `${path}: entry type ${type} is not allowed`;
  if (escapes(path)) return `${path}: path escapes the work dir`;
  if (type === 'SymbolicLink' && linkpath !== undefined) {
    // A symlink's target is relative to the directory holding it.
    if (posix.isAbsolute(linkpath) || escapes(posix.join(posix.dirname(path), linkpath))) {
      return `${path}: symlink target ${linkpath} escapes the work dir`;
    }
  }
  return null;
}

function escapes(path: string): boolean {
  if (posix.isAbsolute(path) || /^[a-zA-Z]:/.test(path)) return true;
  const normalized = posix.normalize(path);
  return normalized === '..' || normalized.startsWith('../');
}
