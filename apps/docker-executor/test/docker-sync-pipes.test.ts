import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { Client } from 'pg';
import type { ClaimedTaskRun } from '@sluice/protocol';
import { DockerExecutor, type ExecutorContext } from '@sluice/executors';
import {
  InMemoryExecutorProtocol,
  claimedRun,
  createTestDatabase,
  ensureRunnerImage,
  eventually,
  recordingLogger,
  removeOwned,
  requireDocker,
  type TestDatabase,
} from '@sluice/testing';
import { buildHarnessImage } from './sync-harness';
import {
  DESTINATION_POSTGRES_IMAGE,
  SOURCE_IMAGE,
  SOURCE_NOBODY_IMAGE,
  ensureSyncConnectorImages,
  sequenceCatalog,
} from './sync-images';

/**
 * The docker executor's side of a sync (docs/connectors.md#sync-on-docker):
 * the volume and the three containers of an attempt, the FIFOs between them,
 * the `sluice connector-pipe` wrapper in each connector's image, removal and
 * adoption. The runner's container runs a harness around the runner's real
 * FIFO endpoints (sync-harness.ts), the connectors are the example source
 * and destination-postgres writing into a test database.
 */
const OWNER = `syncp-${randomBytes(3).toString('hex')}`;
const RECORDS = 3000;
let docker: Docker;
let runnerImage: string;
let base: string;
let db: TestDatabase;
let protocol: InMemoryExecutorProtocol;
let ctx: ExecutorContext;
const executors: DockerExecutor[] = [];

beforeAll(async () => {
  docker = await requireDocker();
  runnerImage = await ensureRunnerImage(docker);
  base = await ensureSyncConnectorImages(docker);
  db = await createTestDatabase({ empty: true });
}, 300_000);

afterAll(async () => {
  await removeOwned(docker, OWNER);
  for (const v of (await docker.listVolumes({ filters: { label: [`sluice.io/owner=${OWNER}`] } })).Volumes ??
    []) {
    await docker
      .getVolume(v.Name)
      .remove({ force: true })
      .catch(() => undefined);
  }
  await db?.drop();
});

beforeEach(() => {
  protocol = new InMemoryExecutorProtocol({ unknownTaskRuns: 'accept' });
  ctx = { protocol, runnerApiUrl: 'http://127.0.0.1:9', log: recordingLogger() };
});

afterEach(async () => {
  await Promise.all(executors.splice(0).map((e) => e.shutdown()));
});

function newExecutor(): DockerExecutor {
  const executor = new DockerExecutor({
    docker,
    ownerId: OWNER,
    runnerImage,
    network: 'host',
    heartbeatIntervalMs: 200,
    stopGraceSeconds: 2,
  });
  executors.push(executor);
  return executor;
}

function syncRun(prefix: string, waitForGo = false, sourceImage = SOURCE_IMAGE): ClaimedTaskRun {
  const harness = buildHarnessImage(base, {
    source: { streams: ['numbers'], records_per_stream: RECORDS, state_every: 500 },
    destination: { url: db.url, table_prefix: prefix },
    catalog: sequenceCatalog(['numbers']),
    waitForGo,
  });
  return claimedRun({
    taskRunId: `sync-${randomBytes(4).toString('hex')}`,
    executor: { type: 'docker', pool: 'default', image: harness, inject_runner: false },
    task: {
      type: 'sync',
      source: { image: sourceImage, config: {} },
      destination: { image: DESTINATION_POSTGRES_IMAGE, config: {} },
    },
  });
}

const attemptContainers = (run: ClaimedTaskRun) =>
  docker.listContainers({ all: true, filters: { label: [`sluice.io/task-run=${run.taskRunId}`] } });
const attemptVolumes = async (run: ClaimedTaskRun) =>
  (await docker.listVolumes({ filters: { label: [`sluice.io/task-run=${run.taskRunId}`] } })).Volumes ?? [];

async function rowsIn(table: string): Promise<number> {
  const client = new Client({ connectionString: db.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}"`);
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

/** Puts `work/go` into the attempt's volume: the harness in the runner's container starts the connectors. */
function go(containerId: string): void {
  execFileSync('docker', ['exec', containerId, 'touch', '/sluice-sync/work/go']);
}

describe('docker executor: a sync attempt', () => {
  it('runs the runner, source and destination in three labelled containers on one volume, piped through FIFOs, and removes them after', async () => {
    const executor = newExecutor();
    const run = syncRun('a_', true);
    const handle = await executor.start(run, ctx);

    const containers = await attemptContainers(run);
    const byRole = Object.fromEntries(containers.map((c) => [c.Labels['sluice.io/role'], c]));
    expect(Object.keys(byRole).sort()).toEqual(['destination', 'runner', 'source']);
    for (const c of containers) {
      expect(c.Labels).toMatchObject({
        'sluice.io/owner': OWNER,
        'sluice.io/task-run': run.taskRunId,
        'sluice.io/attempt': '1',
        'sluice.io/execution': run.executionId,
      });
      expect(c.Mounts.map((m) => m.Destination)).toEqual(['/sluice-sync']);
    }
    expect(byRole.runner!.Id).toBe(handle.externalRef);
    expect(byRole.source!.Image).toBe(SOURCE_IMAGE);
    expect(byRole.destination!.Image).toBe(DESTINATION_POSTGRES_IMAGE);
    const volumes = await attemptVolumes(run);
    expect(volumes.map((v) => v.Name)).toEqual([`sluice-${run.taskRunId}-1`]);
    expect(volumes[0]!.Labels).toMatchObject({ 'sluice.io/owner': OWNER, 'sluice.io/attempt': '1' });
    // All three run while the runner waits: the wrappers wait for it on the control pipes.
    await eventually('all three containers running', async () =>
      (await attemptContainers(run)).every((c) => c.State === 'running'),
    );

    go(handle.externalRef!);
    const outcome = await executor.wait(handle);
    expect(outcome).toMatchObject({ exitCode: 0 });
    expect(await rowsIn('a_numbers')).toBe(RECORDS);
    expect(await attemptContainers(run)).toEqual([]);
    expect(await attemptVolumes(run)).toEqual([]);
  }, 180_000);

  it('a restarted executor adopts the attempt through its runner container and keeps all three, then removes them with it', async () => {
    const first = newExecutor();
    const run = syncRun('b_', true);
    const handle = await first.start(run, ctx);
    await first.shutdown();
    // The shut-down executor left everything running.
    expect((await attemptContainers(run)).map((c) => c.State)).toEqual(['running', 'running', 'running']);

    const second = newExecutor();
    const adopted = (await attemptContainers(run)).map((c) => second.adopt(c, ctx)).filter((a) => a !== null);
    // One adoption, of the runner's container: the connectors' go with it.
    expect(adopted.map((a) => a.handle.externalRef)).toEqual([handle.externalRef]);
    expect(second.tracked()).toEqual([run.taskRunId]);
    expect(await attemptContainers(run)).toHaveLength(3);

    go(handle.externalRef!);
    const outcome = await second.wait(adopted[0]!.handle);
    expect(outcome).toMatchObject({ exitCode: 0 });
    expect(await rowsIn('b_numbers')).toBe(RECORDS);
    expect(await attemptContainers(run)).toEqual([]);
    expect(await attemptVolumes(run)).toEqual([]);
  }, 180_000);

  it('a runner container killed mid-sync is lost, and its connectors and volume are removed with it', async () => {
    const executor = newExecutor();
    const run = syncRun('c_', true);
    const handle = await executor.start(run, ctx);
    await docker.getContainer(handle.externalRef!).kill();
    const outcome = await executor.wait(handle);
    expect(outcome).toMatchObject({ reason: 'lost' });
    expect(outcome.error).toMatch(/was killed \(exit code 137\)/);
    expect(await attemptContainers(run)).toEqual([]);
    expect(await attemptVolumes(run)).toEqual([]);
  }, 120_000);

  it("a connector image running as another user than the runner's reads its files (written by its own wrapper, 0600)", async () => {
    const executor = newExecutor();
    const run = syncRun('d_', false, SOURCE_NOBODY_IMAGE);
    const handle = await executor.start(run, ctx);
    const outcome = await executor.wait(handle);
    expect(outcome).toMatchObject({ exitCode: 0 });
    expect(await rowsIn('d_numbers')).toBe(RECORDS);
  }, 120_000);
});
