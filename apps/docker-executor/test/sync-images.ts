import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { ensureNodeImage } from '@sluice/testing';

/**
 * Connector images of the example connectors for the docker sync tests,
 * built on the local node image (no registry): each runs its connector from
 * its ENTRYPOINT, with no AIRBYTE_ENTRYPOINT, as a plain connector image.
 * destination-postgres is bundled with `pg` into one file, so the image
 * needs no node_modules.
 */
const REPO = join(__dirname, '..', '..', '..');
const EXAMPLES = join(REPO, 'examples', 'connectors');

export const SOURCE_IMAGE = 'sluice-test/sync-source-sequence:1';
export const DESTINATION_POSTGRES_IMAGE = 'sluice-test/sync-destination-postgres:1';
export const DESTINATION_NULL_IMAGE = 'sluice-test/sync-destination-null:1';
/** The source as a non-root user (nobody), as many connector images run. */
export const SOURCE_NOBODY_IMAGE = 'sluice-test/sync-source-sequence-nobody:1';

function build(tag: string, base: string, context: string, lines: string[]): void {
  writeFileSync(join(context, 'Dockerfile'), [`FROM ${base}`, ...lines, ''].join('\n'));
  execFileSync('docker', ['build', '-q', '-t', tag, context], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Builds the images (cheap when the engine has their layers cached) and returns the base. */
export async function ensureSyncConnectorImages(docker: Docker): Promise<string> {
  const base = await ensureNodeImage(docker);
  const context = mkdtempSync(join(tmpdir(), 'sync-images-'));
  try {
    cpSync(EXAMPLES, join(context, 'connectors'), { recursive: true });
    // esbuild is the runner app's build tool; loaded from there.
    const esbuild = createRequire(join(REPO, 'apps', 'runner', 'package.json'))('esbuild') as {
      buildSync(options: Record<string, unknown>): unknown;
    };
    esbuild.buildSync({
      entryPoints: [join(EXAMPLES, 'destination-postgres', 'main.cjs')],
      bundle: true,
      platform: 'node',
      target: 'node20',
      external: ['pg-native'],
      outfile: join(context, 'destination-postgres.cjs'),
      logLevel: 'warning',
    });
    build(SOURCE_IMAGE, base, context, [
      'COPY connectors /opt/connectors',
      'ENTRYPOINT ["node", "/opt/connectors/source-sequence/main.cjs"]',
    ]);
    build(SOURCE_NOBODY_IMAGE, base, context, [
      'COPY connectors /opt/connectors',
      'USER 65534:65534',
      'ENTRYPOINT ["node", "/opt/connectors/source-sequence/main.cjs"]',
    ]);
    build(DESTINATION_NULL_IMAGE, base, context, [
      'COPY connectors /opt/connectors',
      'ENTRYPOINT ["node", "/opt/connectors/destination-null/main.cjs"]',
    ]);
    build(DESTINATION_POSTGRES_IMAGE, base, context, [
      'COPY destination-postgres.cjs /opt/destination-postgres.cjs',
      'ENTRYPOINT ["node", "/opt/destination-postgres.cjs"]',
    ]);
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
