import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ended, ensureNodeImage, explained, noContainersLeft, requireDocker, userApi } from '@sluice/testing';
import { useDockerTopology } from './docker-support';

/**
 * `connector` tasks on the docker executor: the example source packaged as a
 * connector image (AIRBYTE_ENTRYPOINT and ENTRYPOINT set, as connector images
 * do), run through the injected runner (docs/connectors.md#where-it-runs).
 */
const OWNER = `conn-${randomBytes(3).toString('hex')}`;
const IMAGE = 'sluice-test/source-sequence:1';
/** The same connector in an image with only an ENTRYPOINT (no AIRBYTE_ENTRYPOINT), as many non-Airbyte images are. */
const PLAIN_IMAGE = 'sluice-test/source-sequence-plain:1';
const EXAMPLES = join(__dirname, '..', '..', '..', 'examples', 'connectors');

const topology = useDockerTopology(OWNER);

beforeAll(async () => {
  // The connector's base: node from this machine's files (no registry to pull node:20-slim from).
  const base = await ensureNodeImage(await requireDocker());
  const context = mkdtempSync(join(tmpdir(), 'connector-image-'));
  try {
    cpSync(EXAMPLES, join(context, 'connectors'), { recursive: true });
    writeFileSync(
      join(context, 'Dockerfile'),
      [
        `FROM ${base}`,
        'COPY connectors /airbyte/connectors',
        'ENV AIRBYTE_ENTRYPOINT="node /airbyte/connectors/source-sequence/main.cjs"',
        'ENTRYPOINT ["node", "/airbyte/connectors/source-sequence/main.cjs"]',
        '',
      ].join('\n'),
    );
    execFileSync('docker', ['build', '-q', '-t', IMAGE, context], { stdio: ['ignore', 'ignore', 'pipe'] });
    writeFileSync(
      join(context, 'Dockerfile'),
      [
        `FROM ${base}`,
        'COPY connectors /opt/connectors',
        'ENTRYPOINT ["node", "/opt/connectors/source-sequence/main.cjs"]',
        '',
      ].join('\n'),
    );
    execFileSync('docker', ['build', '-q', '-t', PLAIN_IMAGE, context], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}, 120_000);

async function runConnector(
  name: string,
  operation: string,
  config: string,
  /** The executor block; by default it names the connector's image too, as it had to before. */
  executor = `{ type: docker, image: "${IMAGE}" }`,
  image = IMAGE,
) {
  const { server, everything } = topology;
  const api = await userApi(server, 'admin');
  const flow = [
    'retry: { max_attempts: 1 }',
    'tasks:',
    '  - id: op',
    '    type: connector',
    `    executor: ${executor}`,
    `    operation: ${operation}`,
    `    connector: { image: "${image}" }`,
    `    config: ${config}`,
    '',
  ].join('\n');
  expect((await api.putFlow('conn', name, flow)).status).toBe(200);
  const id = await api.run('conn', name);
  const execution = await explained(everything(), () => api.waitFor(id, ended, 90_000));
  return execution.taskRuns[0] as (typeof execution.taskRuns)[number] & { error: string | null };
}

describe('docker executor: connector tasks', () => {
  it('runs spec, check (valid and invalid config) and discover of a connector image', async () => {
    const spec = await runConnector('spec', 'spec', '{}');
    expect(spec.state).toBe('SUCCEEDED');
    expect(JSON.parse(spec.outputs!.result!)).toMatchObject({
      connectionSpecification: { title: 'Sequence source' },
    });

    const ok = await runConnector('check-ok', 'check', '{ records_per_stream: 3 }');
    expect(ok).toMatchObject({ state: 'SUCCEEDED', outputs: { status: 'SUCCEEDED' } });

    const bad = await runConnector('check-bad', 'check', '{ records_per_stream: -1 }');
    expect(bad.state).toBe('SUCCEEDED');
    expect(bad.outputs!.status).toBe('FAILED');

    const discover = await runConnector(
      'discover',
      'discover',
      '{ streams: [a, b, c], records_per_stream: 1 }',
    );
    expect(discover.state).toBe('SUCCEEDED');
    expect(discover.outputs!.streams).toBe('3');

    const failed = await runConnector('discover-bad', 'discover', '{}');
    expect(failed.state).toBe('FAILED');
    expect(failed.error).toMatch(/^invalid config: records_per_stream must be an integer/);

    expect(await noContainersLeft(topology.fx.docker, OWNER)).toEqual([]);
  }, 300_000);

  it('runs a connector task in connector.image alone, with the command from the image config when it sets no AIRBYTE_ENTRYPOINT', async () => {
    const executor = '{ type: docker }';
    const spec = await runConnector('plain-spec', 'spec', '{}', executor, PLAIN_IMAGE);
    expect(spec.state).toBe('SUCCEEDED');
    expect(JSON.parse(spec.outputs!.result!)).toMatchObject({
      connectionSpecification: { title: 'Sequence source' },
    });
    const discover = await runConnector(
      'plain-discover',
      'discover',
      '{ streams: [a, b], records_per_stream: 1 }',
      executor,
      PLAIN_IMAGE,
    );
    expect(discover).toMatchObject({ state: 'SUCCEEDED', outputs: { streams: '2' } });
    // The Airbyte image too, with no executor.image: its AIRBYTE_ENTRYPOINT is the command.
    const check = await runConnector('airbyte-check', 'check', '{ records_per_stream: 3 }', executor, IMAGE);
    expect(check).toMatchObject({ state: 'SUCCEEDED', outputs: { status: 'SUCCEEDED' } });
    expect(await noContainersLeft(topology.fx.docker, OWNER)).toEqual([]);
  }, 300_000);
});
