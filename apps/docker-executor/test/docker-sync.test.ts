import { Client } from 'pg';
import {
  ended,
  explained,
  noContainersLeft,
  ownedContainers,
  userApi,
  type ContainerInfo,
} from '@sluice/testing';
import { startDockerExecutor, useDockerServer } from './docker-support';
import {
  DESTINATION_POSTGRES_IMAGE,
  SOURCE_IMAGE,
  ensureSyncConnectorImages,
  sequenceCatalog,
} from './sync-images';

/**
 * `sync` tasks on the docker executor end to end (docs/connectors.md#sync-on-docker):
 * the runner (SLUICE_RUNNER_IMAGE's own, no executor.image) orchestrates the
 * example source and destination-postgres images, each in its own
 * container, through the FIFOs of the attempt's volume; states are
 * committed through the runner API as on the process executor.
 */
const NS = 'dsync';
let sqlClient: Client;
const t = useDockerServer({
  setup: async ({ fx, db }) => {
    await ensureSyncConnectorImages(fx.docker);
    sqlClient = new Client({ connectionString: db.url });
    sqlClient.on('error', () => undefined);
    await sqlClient.connect();
  },
  teardown: async () => {
    await sqlClient?.end();
  },
  timeoutMs: 300_000,
});

async function newExecutor(): Promise<string> {
  const owner = t.newOwner('dsync');
  t.processes.executor = await startDockerExecutor(t.server, owner, t.fx);
  return owner;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function syncFlow(schema: string, records: number, options: { delayMs?: number; maxAttempts?: number } = {}) {
  return JSON.stringify({
    tasks: [
      {
        id: 'sync',
        type: 'sync',
        retry: { max_attempts: options.maxAttempts ?? 1 },
        executor: { type: 'docker' },
        source: {
          image: SOURCE_IMAGE,
          config: { streams: ['users'], records_per_stream: records, state_every: 50 },
        },
        destination: {
          image: DESTINATION_POSTGRES_IMAGE,
          config: { url: t.db.url, schema, delay_ms_per_record: options.delayMs ?? 0 },
        },
        catalog: sequenceCatalog(['users']),
      },
    ],
  });
}

async function startSync(name: string, flowJson: string) {
  const api = await userApi(t.server, 'admin');
  expect((await api.putFlow(NS, name, flowJson)).status).toBe(200);
  return { api, id: await api.run(NS, name) };
}

async function tableIds(schema: string): Promise<number[]> {
  const { rows } = await sqlClient.query<{ id: number }>(
    `SELECT (data->>'id')::int AS id FROM "${schema}"."users" ORDER BY 1`,
  );
  return rows.map((r) => r.id);
}

/** Every delivery the destination received, in order: [write run, id]. */
async function deliveries(schema: string): Promise<Array<[number, number]>> {
  const { rows } = await sqlClient.query<{ run_id: string; id: number }>(
    `SELECT run_id, (pk::jsonb->>0)::int AS id FROM "${schema}"."_sluice_deliveries" ORDER BY id`,
  );
  return rows.map((r) => [Number(r.run_id), r.id]);
}

async function ledger(flow: string): Promise<Array<{ attempt: number; records: number }>> {
  const { rows } = await sqlClient.query<{ attempt: number; records: string }>(
    `SELECT attempt, records FROM sync_commits WHERE namespace = $1 AND flow_id = $2 ORDER BY id`,
    [NS, flow],
  );
  return rows.map((r) => ({ attempt: r.attempt, records: Number(r.records) }));
}

async function waitForCommits(flow: string, n: number): Promise<void> {
  for (let i = 0; (await ledger(flow)).length < n; i++) {
    if (i > 600) throw new Error(`fewer than ${n} commits within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function containersByRole(owner: string, taskRunId?: string): Promise<Record<string, ContainerInfo>> {
  const all = await ownedContainers(t.fx.docker, owner);
  return Object.fromEntries(
    all
      .filter((c) => taskRunId === undefined || c.Labels['sluice.io/task-run'] === taskRunId)
      .map((c) => [c.Labels['sluice.io/role'] ?? '?', c]),
  );
}

/** The owner's volumes, once none is left or after 10 s (the volume goes right after the containers). */
async function ownedVolumes(owner: string): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { Volumes } = await t.fx.docker.listVolumes({ filters: { label: [`sluice.io/owner=${owner}`] } });
    const names = (Volumes ?? []).map((v) => v.Name);
    if (names.length === 0 || Date.now() > deadline) return names;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('docker executor: sync tasks', () => {
  it('syncs the example images end to end in three labelled containers, then incrementally; all removed after', async () => {
    const owner = await newExecutor();
    const { api, id } = await startSync('e2e', syncFlow('e2e', 1000, { delayMs: 2 }));
    const running = await explained(t.everything(), () =>
      api.waitFor(id, (e) => e.taskRuns[0]?.state === 'RUNNING', 60_000),
    );
    const taskRunId = running.taskRuns[0]!.id;
    const roles = await containersByRole(owner, taskRunId);
    expect(Object.keys(roles).sort()).toEqual(['destination', 'runner', 'source']);
    for (const c of Object.values(roles)) {
      expect(c.Labels).toMatchObject({
        'sluice.io/owner': owner,
        'sluice.io/task-run': taskRunId,
        'sluice.io/attempt': '1',
      });
    }
    expect(roles.source!.Image).toBe(SOURCE_IMAGE);
    expect(roles.destination!.Image).toBe(DESTINATION_POSTGRES_IMAGE);
    expect(roles.runner!.Image).toBe(t.fx.runner);
    expect(running.taskRuns[0]!.externalRef).toBe(roles.runner!.Id);

    const done = await explained(t.everything(), () => api.waitFor(id, ended, 120_000));
    expect(done.taskRuns[0]).toMatchObject({ state: 'SUCCEEDED' });
    expect(done.taskRuns[0]!.outputs).toMatchObject({ records_committed: '1000' });
    expect(await tableIds('e2e')).toEqual(range(1, 1000));
    expect(await noContainersLeft(t.fx.docker, owner)).toEqual([]);
    expect(await ownedVolumes(owner)).toEqual([]);

    // The next sync starts from the committed state: only the new records move.
    const second = await startSync('e2e', syncFlow('e2e', 1500));
    const again = await explained(t.everything(), () => second.api.waitFor(second.id, ended, 120_000));
    expect(again.taskRuns[0]).toMatchObject({ state: 'SUCCEEDED' });
    const runs = await deliveries('e2e');
    const last = Math.max(...runs.map(([run]) => run));
    expect(runs.filter(([run]) => run === last).map(([, n]) => n)).toEqual(range(1001, 1500));
    expect(await tableIds('e2e')).toEqual(range(1, 1500));
    expect(await noContainersLeft(t.fx.docker, owner)).toEqual([]);
  }, 300_000);

  it("kill of the runner's container mid-sync: lost, and the retry finishes from the last committed state", async () => {
    const owner = await newExecutor();
    const { api, id } = await startSync('killed', syncFlow('killed', 2000, { delayMs: 2.5, maxAttempts: 2 }));
    await explained(t.everything(), () => waitForCommits('killed', 2));
    const roles = await containersByRole(owner);
    await t.fx.docker.getContainer(roles.runner!.Id).kill();

    const done = await explained(t.everything(), () => api.waitFor(id, ended, 180_000));
    expect(done.state).toBe('SUCCEEDED');
    const [lost, retried] = done.taskRuns;
    expect(lost).toMatchObject({ attempt: 1, state: 'FAILED', reason: 'lost' });
    expect(retried).toMatchObject({ attempt: 2, state: 'SUCCEEDED' });
    const rows = await ledger('killed');
    expect([...new Set(rows.map((r) => r.attempt))]).toEqual([1, 2]);
    const committedByFirst = rows.filter((r) => r.attempt === 1).reduce((n, r) => n + r.records, 0);
    expect(retried!.outputs).toMatchObject({ records_committed: String(2000 - committedByFirst) });
    const runs = await deliveries('killed');
    const last = Math.max(...runs.map(([run]) => run));
    expect(runs.filter(([run]) => run === last).map(([, n]) => n)).toEqual(range(committedByFirst + 1, 2000));
    expect(await tableIds('killed')).toEqual(range(1, 2000));
    expect(await noContainersLeft(t.fx.docker, owner)).toEqual([]);
    expect(await ownedVolumes(owner)).toEqual([]);
  }, 300_000);

  it('an executor killed and restarted mid-sync adopts the attempt with all three containers, and the sync finishes', async () => {
    const owner = await newExecutor();
    const { api, id } = await startSync('adopted', syncFlow('adopted', 2000, { delayMs: 3 }));
    await explained(t.everything(), () => waitForCommits('adopted', 1));
    const before = await containersByRole(owner);
    t.processes.executor!.proc.kill('SIGKILL');
    await t.processes.executor!.exited;

    t.processes.executor = await startDockerExecutor(t.server, owner, t.fx);
    await explained(t.everything(), async () => {
      for (
        let i = 0;
        !t.processes.executor!.output().includes('adopted a container whose task run still runs');
        i++
      ) {
        if (i > 300) throw new Error('no adoption within 30 s');
        await new Promise((r) => setTimeout(r, 100));
      }
    });
    // Adopted, not replaced: the same three containers still run.
    const after = await containersByRole(owner);
    expect(Object.fromEntries(Object.entries(after).map(([role, c]) => [role, c.Id]))).toEqual(
      Object.fromEntries(Object.entries(before).map(([role, c]) => [role, c.Id])),
    );
    // The source may have sent everything already (it is faster than the destination); the rest still runs.
    expect([after.runner!.State, after.destination!.State]).toEqual(['running', 'running']);

    const done = await explained(t.everything(), () => api.waitFor(id, ended, 180_000));
    expect(done.taskRuns.map((r) => [r.attempt, r.state])).toEqual([[1, 'SUCCEEDED']]);
    expect(await tableIds('adopted')).toEqual(range(1, 2000));
    expect(await noContainersLeft(t.fx.docker, owner)).toEqual([]);
    expect(await ownedVolumes(owner)).toEqual([]);
  }, 300_000);

  it('a cancelled sync stops its connectors through the runner and leaves no container or volume', async () => {
    const owner = await newExecutor();
    const { api, id } = await startSync('cancelled', syncFlow('cancelled', 5000, { delayMs: 5 }));
    await explained(t.everything(), () => waitForCommits('cancelled', 1));
    expect(Object.keys(await containersByRole(owner)).sort()).toEqual(['destination', 'runner', 'source']);
    expect((await api.call('POST', `/api/v1/executions/${id}/cancel`)).status).toBeLessThan(300);
    const done = await explained(t.everything(), () => api.waitFor(id, ended, 60_000));
    expect(done.taskRuns[0]).toMatchObject({ state: 'CANCELLED' });
    const committed = (await ledger('cancelled')).reduce((n, r) => n + r.records, 0);
    expect(committed).toBeLessThan(5000);
    expect(await noContainersLeft(t.fx.docker, owner)).toEqual([]);
    expect(await ownedVolumes(owner)).toEqual([]);
  }, 180_000);
});
