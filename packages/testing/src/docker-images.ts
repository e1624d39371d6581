import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type Docker from 'dockerode';
import { dir, hostFile, importRootfs, RootfsEntry, textFile } from './rootfs';

/**
 * Test images built from files of this machine, without a registry: each
 * `ensure…Image` imports its image once and reuses it while its content is
 * unchanged (a content hash in a label), and returns the tag.
 */

export const BUSYBOX_STATIC_IMAGE = 'sluice-test/busybox-static:1';
export const GLIBC_IMAGE = 'sluice-test/glibc:1';
export const RUNNER_IMAGE = 'sluice-test/runner:1';

/** Where the runner image keeps the self-contained runner: the binary and, beside it, its loader + libraries. */
export const RUNNER_IMAGE_BINARY = '/usr/local/bin/sluice';
export const RUNNER_IMAGE_LIB = '/usr/local/bin/lib';
/** The dynamic loader the self-contained runner is started through (`<lib>/ld-linux-x86-64.so.2 --library-path <lib> <binary>`). */
export const LOADER_NAME = 'ld-linux-x86-64.so.2';

/** busybox-static's binary (apt-get install busybox-static; scripts/docker-engine.sh installs it). */
const HOST_BUSYBOX = '/bin/busybox';
const HOST_LIB_DIR = '/lib/x86_64-linux-gnu';
const HOST_LOADER = `/lib64/${LOADER_NAME}`;
/** glibc itself and no more: a glibc image on which plain `node` would not start (no libstdc++, no libgcc_s). */
const GLIBC_LIBS = ['libc.so.6', 'libm.so.6', 'libpthread.so.0', 'libdl.so.2', 'librt.so.1'];

/** The self-contained runner that `pnpm --filter @sluice/app-runner build` writes. */
export const DEFAULT_RUNNER_SEA_DIR = resolve(__dirname, '../../../apps/runner/dist/sea');

const PATH_ENV = 'ENV PATH=/usr/local/bin:/bin';

/** busybox-static only: no libc, no loader, no Node.js. */
export async function ensureBusyboxStaticImage(docker: Docker): Promise<string> {
  return importRootfs(docker, BUSYBOX_STATIC_IMAGE, busyboxRootfs(), [PATH_ENV]);
}

/** busybox applets plus glibc and its loader from this machine, but no libstdc++ and no libgcc_s. */
export async function ensureGlibcNoLibstdcxxImage(docker: Docker): Promise<string> {
  const glibc = GLIBC_LIBS.filter((lib) => existsSync(join(HOST_LIB_DIR, lib))).map((lib) =>
    hostFile(`lib/x86_64-linux-gnu/${lib}`, join(HOST_LIB_DIR, lib)),
  );
  return importRootfs(
    docker,
    GLIBC_IMAGE,
    [
      ...busyboxRootfs(),
      dir('lib/x86_64-linux-gnu'),
      ...glibc,
      dir('lib64'),
      hostFile(`lib64/${LOADER_NAME}`, HOST_LOADER),
    ],
    [PATH_ENV],
  );
}

/**
 * What SLUICE_RUNNER_IMAGE holds: the busybox-static rootfs plus the
 * self-contained runner at /usr/local/bin/sluice and its loader + libraries in
 * /usr/local/bin/lib (what the docker executor copies out). The same loader and
 * libraries also sit at the system paths, so `sluice exec` runs straight from
 * PATH (`inject_runner: false`).
 */
export async function ensureRunnerImage(
  docker: Docker,
  seaDir: string = DEFAULT_RUNNER_SEA_DIR,
): Promise<string> {
  const binary = join(seaDir, 'sluice');
  const libDir = join(seaDir, 'lib');
  if (!existsSync(binary) || !existsSync(join(libDir, LOADER_NAME))) {
    throw new Error(
      `the self-contained runner is missing in ${seaDir} (sluice and lib/${LOADER_NAME}); build it with \`pnpm --filter @sluice/app-runner build\``,
    );
  }
  const libs = readdirSync(libDir).filter((name) => name !== LOADER_NAME);
  return importRootfs(
    docker,
    RUNNER_IMAGE,
    [
      ...busyboxRootfs(),
      dir('usr'),
      dir('usr/local'),
      dir('usr/local/bin'),
      hostFile('usr/local/bin/sluice', binary),
      dir('usr/local/bin/lib'),
      hostFile(`usr/local/bin/lib/${LOADER_NAME}`, join(libDir, LOADER_NAME)),
      ...libs.map((lib) => hostFile(`usr/local/bin/lib/${lib}`, join(libDir, lib))),
      dir('lib64'),
      hostFile(`lib64/${LOADER_NAME}`, join(libDir, LOADER_NAME)),
      dir('lib/x86_64-linux-gnu'),
      ...libs.map((lib) => hostFile(`lib/x86_64-linux-gnu/${lib}`, join(libDir, lib))),
    ],
    [PATH_ENV],
  );
}

let applets: string[] | undefined;

export function busyboxRootfs(): RootfsEntry[] {
  if (!existsSync(HOST_BUSYBOX)) {
    throw new Error(
      `${HOST_BUSYBOX} is missing: install busybox-static (bash scripts/docker-engine.sh does)`,
    );
  }
  applets ??= execFileSync(HOST_BUSYBOX, ['--list'], { encoding: 'utf8' })
    .split('\n')
    .filter((name) => name && name !== 'busybox');
  return [
    dir('bin'),
    hostFile('bin/busybox', HOST_BUSYBOX),
    ...applets.map((name): RootfsEntry => ({
      type: 'symlink',
      name: `bin/${name}`,
      linkname: '/bin/busybox',
    })),
    dir('etc'),
    textFile(
      'etc/passwd',
      'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n',
    ),
    textFile('etc/group', 'root:x:0:\nnogroup:x:65534:\n'),
    dir('root', 0o700),
    dir('tmp', 0o1777),
  ];
}
