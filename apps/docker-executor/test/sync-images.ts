import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { ensureNodeImage } from '@sluice/testing';

/**
 * The example connectors' images for the docker sync tests, built from their
 * own Dockerfiles in examples/connectors (what a user builds) on the local
 * node image (no registry): each runs its connector from its ENTRYPOINT, with
 * no AIRBYTE_ENTRYPOINT, as a plain connector image. destination-postgres is
 * bundled with `pg` into one file first (examples/connectors/bundle.cjs).
 */
const REPO = join(__dirname, '..', '..', '..');
const EXAMPLES = join(REPO, 'examples', 'connectors');

export const SOURCE_IMAGE = 'sluice-test/sync-source-sequence:1';
export const DESTINATION_POSTGRES_IMAGE = 'sluice-test/sync-destination-postgres:1';
export const DESTINATION_NULL_IMAGE = 'sluice-test/sync-destination-null:1';
/** The source as a non-root user (nobody), as many connector images run. */
export const SOURCE_NOBODY_IMAGE = 'sluice-test/sync-source-sequence-nobody:1';

function docker(args: string[]): void {
  execFileSync('docker', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Builds the images (cheap when the engine has their layers cached) and returns the base. */
export async function ensureSyncConnectorImages(engine: Docker): Promise<string> {
  const base = await ensureNodeImage(engine);
  const context = mkdtempSync(join(tmpdir(), 'sync-images-'));
  try {
    cpSync(EXAMPLES, context, { recursive: true });
    execFileSync(process.execPath, [join(EXAMPLES, 'bundle.cjs'), join(context, 'dist')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const images: [string, string][] = [
      [SOURCE_IMAGE, 'source-sequence'],
      [DESTINATION_NULL_IMAGE, 'destination-null'],
      [DESTINATION_POSTGRES_IMAGE, 'destination-postgres'],
    ];
    for (const [tag, connector] of images) {
      const dockerfile = join(context, connector, 'Dockerfile');
      docker(['build', '-q', '--build-arg', `NODE_IMAGE=${base}`, '-f', dockerfile, '-t', tag, context]);
    }
    const nobody = join(context, 'nobody.Dockerfile');
    writeFileSync(nobody, `FROM ${SOURCE_IMAGE}\nUSER 65534:65534\n`);
    docker(['build', '-q', '-f', nobody, '-t', SOURCE_NOBODY_IMAGE, context]);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return base;
}

/** A configured catalog of source-sequence streams, incremental on `id`, deduplicated by `id`. */
export function sequenceCatalog(streams: string[]): unknown {
  return {
    streams: streams.map((name) => ({
      stream: {
        name,
        json_schema: { type: 'object', properties: { id: { type: 'integer' } } },
        supported_sync_modes: ['full_refresh', 'incremental'],
        source_defined_cursor: true,
        default_cursor_field: ['id'],
        source_defined_primary_key: [['id']],
      },
      sync_mode: 'incremental',
      cursor_field: ['id'],
      destination_sync_mode: 'append_dedup',
      primary_key: [['id']],
    })),
  };
}
