import type Docker from 'dockerode';
import { pack } from 'tar-stream';
import { ensureBusyboxStaticImage } from '@sluice/testing';

export const FAKE_RUNNER_IMAGE = 'sluice-test/fake-runner:1';

/**
 * A stand-in for `sluice exec` on the image's PATH (inject_runner: false):
 * what it does depends on the task run ID, the only thing it is told.
 * Without a trap, sh ends at a stop's SIGTERM (the engine's init, PID 1, passes it on).
 */
const FAKE_RUNNER = `#!/bin/sh
case "$SLUICE_TASK_RUN_ID" in
  *trap*) trap 'echo got-term; sleep 1; exit 0' TERM; while true; do sleep 0.1; done ;;
  *exit7*) exit 7 ;;
  *) while true; do sleep 0.1; done ;;
esac
`;

function tarOf(files: Record<string, string>): Promise<Buffer> {
  const out = pack();
  const chunks: Buffer[] = [];
  out.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<Buffer>((resolve) => out.on('end', () => resolve(Buffer.concat(chunks))));
  out.entry({ name: 'usr/', type: 'directory', mode: 0o755 });
  out.entry({ name: 'usr/local/', type: 'directory', mode: 0o755 });
  out.entry({ name: 'usr/local/bin/', type: 'directory', mode: 0o755 });
  for (const [name, text] of Object.entries(files)) out.entry({ name, mode: 0o755 }, text);
  out.finalize();
  return done;
}

/** busybox-static plus the fake runner at /usr/local/bin/sluice, committed as FAKE_RUNNER_IMAGE. */
export async function ensureFakeRunnerImage(docker: Docker): Promise<string> {
  const base = await ensureBusyboxStaticImage(docker);
  const builder = await docker.createContainer({ Image: base, Entrypoint: ['/bin/true'] });
  try {
    await builder.putArchive(await tarOf({ 'usr/local/bin/sluice': FAKE_RUNNER }), { path: '/' });
    const [repo, tag] = FAKE_RUNNER_IMAGE.split(':');
    await builder.commit({ repo, tag });
  } finally {
    await builder.remove({ force: true });
  }
  return FAKE_RUNNER_IMAGE;
}
