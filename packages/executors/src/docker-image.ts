import type Docker from 'dockerode';
import type { ResolvedExecutor } from '@sluice/protocol';
import { errorMessage } from './errors';
import { TaskRunStartError } from './start-error';

export type PullPolicy = NonNullable<ResolvedExecutor['pull']>;

/** A pull that neither finishes nor fails within this long counts as failed (no registry answers). */
const DEFAULT_PULL_TIMEOUT_MS = 10 * 60_000;

function isNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'statusCode' in err && err.statusCode === 404;
}

async function isPresent(docker: Docker, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** Pulls `image` and resolves once the engine says it is done; the progress stream carries the errors. */
async function pull(docker: Docker, image: string, timeoutMs: number): Promise<void> {
  const stream = await docker.pull(image);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    docker.modem.followProgress(stream, (err: Error | null, events: Array<{ error?: string }>) => {
      clearTimeout(timer);
      const failed = err ?? events.find((e) => e.error)?.error;
      if (failed) reject(failed instanceof Error ? failed : new Error(failed));
      else resolve();
    });
  });
}

/**
 * Makes `image` available on the engine as the `pull` policy says
 * (`if_not_present` by default). Anything that leaves it unavailable is a
 * TaskRunStartError with reason `image_pull` and a message naming the image.
 */
export async function ensureImage(
  docker: Docker,
  image: string,
  policy: PullPolicy = 'if_not_present',
  timeoutMs = DEFAULT_PULL_TIMEOUT_MS,
): Promise<void> {
  const fail = (why: string) =>
    new TaskRunStartError('image_pull', `image ${image} is not available (pull: ${policy}): ${why}`);
  if (policy !== 'always') {
    let present: boolean;
    try {
      present = await isPresent(docker, image);
    } catch (err) {
      throw fail(`inspecting it failed: ${errorMessage(err)}`);
    }
    if (present) return;
    if (policy === 'never') throw fail('it is not present on the Docker engine and pull is never');
  }
  try {
    await pull(docker, image, timeoutMs);
  } catch (err) {
    throw fail(`pulling it failed: ${errorMessage(err)}`);
  }
}
