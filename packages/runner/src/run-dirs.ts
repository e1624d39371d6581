import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One task run's private directory (mode 0700):
 *   work/       the task's cwd, where the snapshot is extracted
 *   outputs     $SLUICE_OUTPUTS, key=value lines
 *   metrics     $SLUICE_METRICS, JSON lines
 *   artifacts/  $SLUICE_ARTIFACTS, every regular file is uploaded
 * The runner's files sit beside work/, not in it, so no snapshot file can shadow them.
 */
export interface RunDirs {
  root: string;
  work: string;
  outputsFile: string;
  metricsFile: string;
  artifactsDir: string;
}

export async function createRunDirs(parent: string = tmpdir()): Promise<RunDirs> {
  const root = await mkdtemp(join(parent, 'sluice-run-'));
  const dirs: RunDirs = {
    root,
    work: join(root, 'work'),
    outputsFile: join(root, 'outputs'),
    metricsFile: join(root, 'metrics'),
    artifactsDir: join(root, 'artifacts'),
  };
  await Promise.all([
    mkdir(dirs.work),
    mkdir(dirs.artifactsDir),
    writeFile(dirs.outputsFile, ''),
    writeFile(dirs.metricsFile, ''),
  ]);
  return dirs;
}

export async function removeRunDirs(dirs: RunDirs): Promise<void> {
  await rm(dirs.root, { recursive: true, force: true, maxRetries: 3 });
}
