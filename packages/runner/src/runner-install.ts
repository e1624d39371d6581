import { chmod, copyFile, mkdir, readdir, rename, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { isSea } from 'node:sea';

/**
 * `sluice runner-install DIR` writes the self-contained runner into DIR (the
 * kubernetes init container): the executable `sluice` and, beside it, `lib/`
 * with the dynamic loader and the libraries it needs, so the task container
 * can start it in any Linux image as
 * `DIR/lib/ld-linux-x86-64.so.2 --library-path DIR/lib DIR/sluice exec`.
 */

/** The self-contained runner: the executable and its loader + libraries directory. */
export interface SelfContainedRunner {
  binary: string;
  libDir: string;
}

const LOADER = 'ld-linux-x86-64.so.2';

/** The runner cannot install itself (no self-contained build present); exit code 2 like a configuration error. */
export class RunnerInstallUnavailableError extends Error {
  readonly exitCode = 2;
  constructor(detail: string) {
    super(
      `${detail}; the self-contained runner is built by \`pnpm --filter @sluice/app-runner build\` ` +
        '(apps/runner/dist/sea/sluice and apps/runner/dist/sea/lib/)',
    );
    this.name = 'RunnerInstallUnavailableError';
  }
}

/**
 * Where the self-contained runner is. Running as that runner, it is this very
 * executable (when started through its loader, `process.execPath` is the
 * loader, so the binary is argv[0]); running from plain JavaScript, it is the
 * build in `builtSeaDir`, which must exist.
 */
export function locateSelfContainedRunner(builtSeaDir: string): SelfContainedRunner {
  if (isSea()) {
    const binary = basename(process.execPath).startsWith('ld-linux')
      ? resolveCommand(process.argv0)
      : process.execPath;
    return checked({ binary, libDir: join(dirname(binary), 'lib') });
  }
  return checked({ binary: join(builtSeaDir, 'sluice'), libDir: join(builtSeaDir, 'lib') });
}

function checked(runner: SelfContainedRunner): SelfContainedRunner {
  for (const path of [runner.binary, join(runner.libDir, LOADER)]) {
    if (!existsSync(path)) throw new RunnerInstallUnavailableError(`${path} does not exist`);
  }
  return runner;
}

/** argv[0] as the shell found it: a path as it is, a bare name through PATH. */
function resolveCommand(argv0: string): string {
  if (argv0.includes('/')) return isAbsolute(argv0) ? argv0 : resolve(argv0);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, argv0))) return join(dir, argv0);
  }
  return argv0;
}

/** Copies the runner into `targetDir` (created when missing) as `sluice` and `lib/`, keeping file modes. */
export async function runnerInstall(targetDir: string, runner: SelfContainedRunner): Promise<void> {
  if (!targetDir) throw new Error('runner-install: the target directory is required');
  await mkdir(join(targetDir, 'lib'), { recursive: true });
  for (const name of await readdir(runner.libDir)) {
    await copyKeepingMode(join(runner.libDir, name), join(targetDir, 'lib', name));
  }
  // The executable last: once `sluice` is there, the installation is whole.
  await copyKeepingMode(runner.binary, join(targetDir, 'sluice'));
}

/** Copy through a temporary name and rename, so a reader never sees half a file. */
async function copyKeepingMode(from: string, to: string): Promise<void> {
  const partial = `${to}.partial`;
  await copyFile(from, partial);
  await chmod(partial, (await stat(from)).mode & 0o7777);
  await rename(partial, to);
}
