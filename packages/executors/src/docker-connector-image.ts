import type Docker from 'dockerode';
import type { ClaimedTaskRun } from '@sluice/protocol';
import { ensureImage } from './docker-image';
import { errorMessage } from './errors';
import { TaskRunStartError } from './start-error';

/**
 * The variable the runner reads a connector image's command from when the
 * image sets no AIRBYTE_ENTRYPOINT: a JSON array of strings
 * (docs/connectors.md#where-it-runs).
 */
export const CONNECTOR_ENTRYPOINT_ENV = 'SLUICE_CONNECTOR_ENTRYPOINT';

/** A connector reference of a stored task (`connector`, `source`, `destination`). */
function imageOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const image = (value as { image?: unknown }).image;
  return typeof image === 'string' && image.length > 0 ? image : undefined;
}

/** `connector.image` of a connector task; undefined for every other task. */
export function connectorImageOf(run: Pick<ClaimedTaskRun, 'task'>): string | undefined {
  return run.task.type === 'connector' ? imageOf(run.task.connector) : undefined;
}

/** The images of a sync task's source and destination; null when it is not a sync or one is missing. */
export function syncImagesOf(
  run: Pick<ClaimedTaskRun, 'task' | 'taskRunId'>,
): { source: string; destination: string } | null {
  if (run.task.type !== 'sync') return null;
  const source = imageOf(run.task.source);
  const destination = imageOf(run.task.destination);
  if (!source || !destination) {
    throw new TaskRunStartError(
      'error',
      `task run ${run.taskRunId}: a sync on the docker executor needs source.image and destination.image`,
    );
  }
  return { source, destination };
}

/** What an image's config says about how its connector starts. */
export interface ConnectorImageConfig {
  /** AIRBYTE_ENTRYPOINT (split on whitespace), else the ENTRYPOINT, else the CMD; null when none is set. */
  command: string[] | null;
  /** The image's NODE_OPTIONS: the container's is emptied for the injected runner, so it is handed on. */
  nodeOptions: string | undefined;
}

function envValue(env: readonly string[] | null | undefined, name: string): string | undefined {
  const entry = env?.find((e) => e.startsWith(`${name}=`));
  return entry === undefined ? undefined : entry.slice(name.length + 1);
}

/**
 * Reads the image's config (`docker image inspect`): Airbyte images name
 * their command in AIRBYTE_ENTRYPOINT; any other connector image is taken to
 * start its connector with its ENTRYPOINT (or, without one, its CMD), to
 * which the protocol's operation and flags are appended.
 */
export async function connectorImageConfig(docker: Docker, image: string): Promise<ConnectorImageConfig> {
  let config: {
    Env?: string[] | null;
    Entrypoint?: string[] | string | null;
    Cmd?: string[] | string | null;
  };
  try {
    config = (await docker.getImage(image).inspect()).Config ?? {};
  } catch (err) {
    throw new TaskRunStartError(
      'image_pull',
      `inspecting the connector image ${image} failed: ${errorMessage(err)}`,
    );
  }
  const airbyte = envValue(config.Env, 'AIRBYTE_ENTRYPOINT')?.trim().split(/\s+/).filter(Boolean);
  const asList = (v: string[] | string | null | undefined): string[] =>
    v === null || v === undefined ? [] : typeof v === 'string' ? [v] : v;
  const entrypoint = asList(config.Entrypoint);
  const cmd = asList(config.Cmd);
  const command = airbyte?.length ? airbyte : entrypoint.length ? entrypoint : cmd.length ? cmd : null;
  return { command, nodeOptions: envValue(config.Env, 'NODE_OPTIONS') };
}

/**
 * A connector task runs in its `connector.image` (pulled here), and its
 * runner is told the image's command; null for any other task.
 */
export async function prepareConnectorImage(
  docker: Docker,
  run: Pick<ClaimedTaskRun, 'task' | 'executor'>,
): Promise<{ image: string; extraEnv: string[] } | null> {
  const image = connectorImageOf(run);
  if (!image) return null;
  await ensureImage(docker, image, run.executor.pull);
  const { command } = await connectorImageConfig(docker, image);
  return { image, extraEnv: command ? [`${CONNECTOR_ENTRYPOINT_ENV}=${JSON.stringify(command)}`] : [] };
}
