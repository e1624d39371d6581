import { mkdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Creates SLUICE_DATA_DIR (mode 0700) when missing; one that exists but is no
 * directory, or cannot be created, fails with the variable and path named.
 */
export function ensureDataDir(dataDir: string): void {
  const path = resolve(dataDir);
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const what =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? 'is not a directory (or has a file among its parents)'
        : `cannot be created (${(err as Error).message})`;
    throw new Error(`SLUICE_DATA_DIR ${path} ${what}`, { cause: err });
  }
  if (!statSync(path).isDirectory()) throw new Error(`SLUICE_DATA_DIR ${path} is not a directory`);
}
