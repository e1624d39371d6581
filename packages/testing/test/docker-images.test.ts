import type Docker from 'dockerode';
import {
  DEFAULT_RUNNER_SEA_DIR,
  ensureBusyboxStaticImage,
  ensureGlibcNoLibstdcxxImage,
  ensureRunnerImage,
  requireDocker,
} from '@sluice/testing';

/** The self-contained runner started the way the docker executor starts it: through its loader, NODE_OPTIONS empty. */
const viaLoader = (dir: string, ...args: string[]) => [
  `${dir}/lib/ld-linux-x86-64.so.2`,
  '--library-path',
  `${dir}/lib`,
  `${dir}/sluice`,
  ...args,
];

let docker: Docker;

beforeAll(async () => {
  docker = await requireDocker();
});

/** Runs `cmd` in a new container of `image` (the runner build mounted read-only at /sluice-bin) and removes it. */
async function run(image: string, cmd: string[]): Promise<{ exitCode: number; output: string }> {
  const container = await docker.createContainer({
    Image: image,
    Cmd: cmd,
    Env: ['NODE_OPTIONS='],
    Tty: true,
    HostConfig: { Binds: [`${DEFAULT_RUNNER_SEA_DIR}:/sluice-bin:ro`] },
  });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const logs = await container.logs({ stdout: true, stderr: true });
    return { exitCode: StatusCode, output: logs.toString() };
  } finally {
    await container.remove({ force: true });
  }
}

test('the busybox-static image has no libc, and the runner starts there through its loader', async () => {
  const image = await ensureBusyboxStaticImage(docker);
  const direct = await run(image, ['sh', '-c', '/sluice-bin/sluice --help; echo "exit $?"']);
  expect(direct.output).not.toContain('Usage: sluice');
  expect(direct.output).toContain('exit 127');

  const loaded = await run(image, viaLoader('/sluice-bin', '--help'));
  expect(loaded).toMatchObject({ exitCode: 0, output: expect.stringContaining('Usage: sluice <command>') });
});

test('the glibc image lacks libstdc++, and the runner starts there through its loader', async () => {
  const image = await ensureGlibcNoLibstdcxxImage(docker);
  const direct = await run(image, ['/sluice-bin/sluice', '--help']);
  expect(direct.exitCode).not.toBe(0);
  expect(direct.output).toContain('libstdc++.so.6');

  const loaded = await run(image, viaLoader('/sluice-bin', 'exec'));
  // exec starts and checks its configuration: the runner itself is running.
  expect(loaded.exitCode).toBe(2);
  expect(loaded.output).toContain('SLUICE_TASK_RUN_ID: is required');
});

test('the runner image runs `sluice` from PATH and installs a working copy of itself (the init container)', async () => {
  const image = await ensureRunnerImage(docker);
  const fromPath = await run(image, ['sluice', '--help']);
  expect(fromPath).toMatchObject({ exitCode: 0, output: expect.stringContaining('runner-install DIR') });

  // Once started from PATH, once through the loader (process.execPath is then the loader).
  const install = await run(image, [
    'sh',
    '-c',
    [
      'sluice runner-install /a',
      `${viaLoader('/usr/local/bin', 'runner-install', '/b').join(' ')}`,
      `${viaLoader('/a', '--help').join(' ')} | head -n 1`,
      `${viaLoader('/b', '--help').join(' ')} | head -n 1`,
      'ls /b/lib',
    ].join(' && '),
  ]);
  expect(install.exitCode).toBe(0);
  expect(install.output.match(/Usage: sluice <command>/g)).toHaveLength(2);
  expect(install.output).toContain('libstdc++.so.6');
});

test('an image is imported once and reused while its content is unchanged', async () => {
  const first = await ensureBusyboxStaticImage(docker);
  const id = (await docker.getImage(first).inspect()).Id;
  await ensureBusyboxStaticImage(docker);
  expect((await docker.getImage(first).inspect()).Id).toBe(id);
});
