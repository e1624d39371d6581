import type Docker from 'dockerode';
import { extract, pack, type Header, type Pack } from 'tar-stream';
import { runnerCopyLabels } from './docker-labels';
import { errorMessage } from './errors';
import { TaskRunStartError } from './start-error';

/** Where SLUICE_RUNNER_IMAGE keeps the self-contained runner and its loader + libraries. */
export const RUNNER_IMAGE_BINARY = '/usr/local/bin/sluice';
export const RUNNER_IMAGE_LIB = '/usr/local/bin/lib';

/** Where the runner lands in a task container (`/sluice-bin/sluice`, docs/decisions.md#runner-injection). */
export const INJECTED_DIR = 'sluice-bin';

/**
 * How an injected runner starts: through the loader copied beside it, so it
 * needs nothing of the image (no libc, no libstdc++, no Node.js). NODE_OPTIONS
 * is emptied in the container's env so an image's value cannot reach it.
 */
export const INJECTED_RUNNER_COMMAND = [
  `/${INJECTED_DIR}/lib/ld-linux-x86-64.so.2`,
  '--library-path',
  `/${INJECTED_DIR}/lib`,
  `/${INJECTED_DIR}/sluice`,
  'exec',
];

/**
 * Copies the runner out of SLUICE_RUNNER_IMAGE once per image ID and into each
 * task container before it starts, through the Engine API's archive calls —
 * no volume, so it works with a remote engine and leaves nothing on the host.
 */
export class RunnerInjection {
  private readonly archives = new Map<string, Promise<Buffer>>();
  private readonly copying = new Set<string>();

  constructor(
    private readonly docker: Docker,
    private readonly runnerImage: string,
    /** DOCKER_EXECUTOR_OWNER_ID: the runner-copy container is this owner's too. */
    private readonly ownerId: string,
  ) {}

  /** IDs of the runner-copy containers in use right now: the owner's cleanup leaves them alone. */
  copiesInProgress(): string[] {
    return [...this.copying];
  }

  /** Puts `/sluice-bin/{sluice,lib/}` into a created, not yet started container. */
  async injectInto(container: Docker.Container): Promise<void> {
    const archive = await this.archive();
    await container.putArchive(archive, { path: '/' });
  }

  /** The tar of `sluice-bin/`, read from the runner image the tag names now (a re-tag is picked up). */
  async archive(): Promise<Buffer> {
    let imageId: string;
    try {
      imageId = (await this.docker.getImage(this.runnerImage).inspect()).Id;
    } catch (err) {
      throw new TaskRunStartError(
        'image_pull',
        `SLUICE_RUNNER_IMAGE ${this.runnerImage} is not available on the Docker engine, so the runner cannot be injected: ${errorMessage(err)}`,
      );
    }
    let cached = this.archives.get(imageId);
    if (!cached) {
      cached = this.copyOut(imageId);
      this.archives.set(imageId, cached);
      // A failed copy is not cached: the next task run tries again.
      cached.catch(() => this.archives.delete(imageId));
    }
    return cached;
  }

  private async copyOut(imageId: string): Promise<Buffer> {
    const source = await this.docker.createContainer({
      Image: imageId,
      Entrypoint: [RUNNER_IMAGE_BINARY],
      Cmd: ['--version'],
      Labels: runnerCopyLabels(this.ownerId),
    });
    this.copying.add(source.id);
    try {
      const out = pack();
      const done = collect(out);
      out.entry({ name: `${INJECTED_DIR}/`, type: 'directory', mode: 0o755 });
      await copyEntries(await source.getArchive({ path: RUNNER_IMAGE_BINARY }), out);
      await copyEntries(await source.getArchive({ path: RUNNER_IMAGE_LIB }), out);
      out.finalize();
      return await done;
    } catch (err) {
      throw new Error(
        `copying the runner out of SLUICE_RUNNER_IMAGE ${this.runnerImage} (${RUNNER_IMAGE_BINARY} and ${RUNNER_IMAGE_LIB}/) failed: ${errorMessage(err)}`,
      );
    } finally {
      await source.remove({ force: true }).catch(() => undefined);
      this.copying.delete(source.id);
    }
  }
}

/** Re-packs every entry of `tarStream` under `sluice-bin/`, hard-link targets included. */
function copyEntries(tarStream: NodeJS.ReadableStream, out: Pack): Promise<void> {
  return new Promise((resolve, reject) => {
    const input = extract();
    input.on('entry', (header: Header, body, next) => {
      const renamed: Header = { ...header, name: `${INJECTED_DIR}/${header.name}` };
      if (header.type === 'link' && header.linkname) renamed.linkname = `${INJECTED_DIR}/${header.linkname}`;
      const sink = out.entry(renamed, (err) => (err ? reject(err) : next()));
      body.pipe(sink);
    });
    input.on('finish', resolve);
    input.on('error', reject);
    tarStream.on('error', reject);
    tarStream.pipe(input);
  });
}

function collect(stream: Pack): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}
