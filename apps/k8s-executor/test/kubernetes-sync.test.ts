import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { V1Container, V1Job } from '@kubernetes/client-node';
import { Client } from 'pg';
import { DEFAULT_RUNNER_SEA_DIR, ended, explained, userApi } from '@sluice/testing';
import {
  containerEnv,
  describeKube,
  jobGone,
  kube,
  kubeApis,
  newJob,
  runHere,
  RUNNER_IMAGE_BINARY,
  seaRunnerBuilt,
  secretGone,
  useKubeTopology,
  writeJobPodStatus,
} from './kube-flow-fixtures';

/**
 * A `sync` task on the kubernetes executor end to end (docs/connectors.md#sync-on-kubernetes).
 * The test plays the kubelet: it runs the init container's command (runner-install with the
 * FIFO layout) into two temporary directories standing in for the emptyDirs, then the runner,
 * source and destination containers' commands at once as local processes, each with its
 * container's environment and the mounts mapped to those directories. The connector images'
 * entrypoints are the example connectors as commands, in AIRBYTE_ENTRYPOINT as an image's ENV
 * would set it; the wrapper (`sluice connector-pipe`) reads it.
 */

const OWNER = `k8s-sync-${randomBytes(3).toString('hex')}`;
const NAMESPACE = `sluice-ksync-${randomBytes(3).toString('hex')}`;
const NS = 'ksync';
const SOURCE_IMAGE = 'example/source-sequence:1';
const DESTINATION_IMAGE = 'example/destination-postgres:1';
const CONNECTORS = resolve(__dirname, '..', '..', '..', 'examples', 'connectors');
/** Each image's ENV: its connector's command, as an Airbyte image names it. */
const IMAGE_ENV: Record<string, Record<string, string>> = {
  [SOURCE_IMAGE]: { AIRBYTE_ENTRYPOINT: `node ${join(CONNECTORS, 'source-sequence', 'main.cjs')}` },
  [DESTINATION_IMAGE]: {
    AIRBYTE_ENTRYPOINT: `node ${join(CONNECTORS, 'destination-postgres', 'main.cjs')}`,
  },
};

const built = seaRunnerBuilt();
if (kube && !built) console.warn('SKIPPED kubernetes-sync: no self-contained runner (pnpm build)');

const apis = kubeApis(NAMESPACE);
const topology = useKubeTopology(apis, OWNER, Boolean(kube) && built);

function syncFlow(schema: string, destination: Record<string, unknown> = {}): string {
  return JSON.stringify({
    tasks: [
      {
        id: 'sync',
        type: 'sync',
        retry: { max_attempts: 1 },
        executor: { type: 'kubernetes' },
        source: {
          image: SOURCE_IMAGE,
          config: { streams: ['users'], records_per_stream: 500, state_every: 50 },
        },
        destination: {
          image: DESTINATION_IMAGE,
          config: { url: { secret: 'pg-url' }, schema, batch_size: 50, ...destination },
        },
        catalog: {
          streams: [
            {
              stream: {
                name: 'users',
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
            },
          ],
        },
      },
    ],
  });
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

(built ? describeKube : describe.skip)('kubernetes executor: a sync in one pod', () => {
  let bin: string;
  let sync: string;
  let sql: Client;
  beforeAll(async () => {
    if (!topology) return;
    sql = new Client({ connectionString: topology.db.url });
    sql.on('error', () => undefined);
    await sql.connect();
  });
  afterAll(async () => sql?.end());
  beforeEach(() => {
    bin = mkdtempSync(join(tmpdir(), 'sluice-bin-'));
    sync = mkdtempSync(join(tmpdir(), 'sluice-sync-'));
  });
  afterEach(() => {
    rmSync(bin, { recursive: true, force: true });
    rmSync(sync, { recursive: true, force: true });
  });

  /** A path inside a container, here: the emptyDirs' mounts are the temporary directories. */
  const here = (value: string) =>
    value === RUNNER_IMAGE_BINARY
      ? join(DEFAULT_RUNNER_SEA_DIR, 'sluice')
      : value.replace(/^\/sluice-bin(?=\/|$)/, bin).replace(/^\/sluice-sync(?=\/|$)/, sync);

  /** Runs a container's command here with its environment (and its image's), the mounts mapped. */
  async function runContainer(container: V1Container | undefined) {
    const env = await containerEnv(apis, container);
    const mapped = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, here(v)]));
    const [command = '', ...args] = (container?.command ?? []).map(here);
    return runHere(command, args, { ...(IMAGE_ENV[container?.image ?? ''] ?? {}), ...mapped });
  }

  /** The init container, then the three containers at once (the pod Running meanwhile), as a kubelet would. */
  async function playPod(job: V1Job) {
    const spec = job.spec?.template.spec;
    const init = await runContainer(spec?.initContainers?.[0]);
    expect(init).toMatchObject({ code: 0 });
    expect(statSync(join(sync, 'pipes', 'destination.stdin')).isFIFO()).toBe(true);
    expect(statSync(join(sync, 'pipes', 'destination.stdin')).mode & 0o777).toBe(0o666);
    expect(statSync(join(sync, 'work')).mode & 0o7777).toBe(0o1777);
    const containers = spec?.containers ?? [];
    const exits = Promise.all(containers.map((c) => runContainer(c)));
    await writeJobPodStatus(apis, job, {
      phase: 'Running',
      containerStatuses: containers.map((c) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: true,
        restartCount: 0,
        state: { running: { startedAt: new Date() } },
      })),
    });
    const results = await exits;
    return Object.fromEntries(containers.map((c, i) => [c.name, results[i]!]));
  }

  async function ledger(flow: string): Promise<Array<{ attempt: number; records: number }>> {
    const { rows } = await sql.query<{ attempt: number; records: string }>(
      `SELECT attempt, records FROM sync_commits WHERE namespace = $1 AND flow_id = $2 ORDER BY id`,
      [NS, flow],
    );
    return rows.map((r) => ({ attempt: r.attempt, records: Number(r.records) }));
  }

  const tableIds = async (schema: string) =>
    (
      await sql.query<{ id: number }>(`SELECT (data->>'id')::int AS id FROM "${schema}"."users" ORDER BY 1`)
    ).rows.map((r) => r.id);

  it('runs the orchestrator, source and destination in one Job: SUCCEEDED, records and ledger committed; Job and Secret go', async () => {
    if (!topology) return;
    const { server, everything } = topology;
    const api = await userApi(server, 'admin');
    expect((await api.putSecret(NS, 'pg-url', topology.db.url)).status).toBeLessThan(300);
    expect((await api.putFlow(NS, 'e2e', syncFlow('k8s_e2e'))).status).toBe(200);
    const id = await api.run(NS, 'e2e');
    const job = await explained(everything(), () => newJob(apis, OWNER, new Set(), 1));
    const spec = job.spec?.template.spec;
    expect(spec?.containers.map((c) => [c.name, c.image])).toEqual([
      ['runner', expect.any(String)],
      ['source', SOURCE_IMAGE],
      ['destination', DESTINATION_IMAGE],
    ]);
    expect(spec?.volumes?.map((v) => [v.name, v.emptyDir])).toEqual([
      ['sluice-bin', {}],
      ['sluice-sync', {}],
    ]);
    expect(job.metadata?.labels).toMatchObject({ 'sluice.io/owner': OWNER, 'sluice.io/attempt': '1' });
    // The token is in the runner's container only (by secretKeyRef); no secret value anywhere in the Job.
    const runnerEnv = await containerEnv(apis, spec?.containers[0]);
    expect(runnerEnv.SLUICE_RUN_TOKEN).toMatch(/.{16,}/);
    for (const connector of spec?.containers.slice(1) ?? []) {
      expect(connector.env?.map((e) => e.name)).toEqual(['NODE_OPTIONS']);
    }
    const manifest = JSON.stringify(job);
    expect(manifest).not.toContain(runnerEnv.SLUICE_RUN_TOKEN);
    expect(manifest).not.toContain(topology.db.url);

    const exits = await playPod(job);
    expect(exits).toMatchObject({ runner: { code: 0 }, source: { code: 0 }, destination: { code: 0 } });
    await writeJobPodStatus(apis, job, { phase: 'Succeeded' });

    const execution = await explained(everything(), () => api.waitFor(id, ended, 60_000));
    expect(execution.state).toBe('SUCCEEDED');
    const [run] = execution.taskRuns;
    expect(run).toMatchObject({ state: 'SUCCEEDED', ownerId: OWNER, externalRef: job.metadata?.name });
    expect(run!.outputs).toMatchObject({ records_committed: '500' });
    expect(await tableIds('k8s_e2e')).toEqual(range(1, 500));
    const commits = await ledger('e2e');
    expect(commits.length).toBeGreaterThanOrEqual(1);
    expect(commits.every((c) => c.attempt === 1)).toBe(true);
    expect(commits.reduce((sum, c) => sum + c.records, 0)).toBe(500);
    await explained(everything(), () => jobGone(apis, job));
    await secretGone(apis, job);
  }, 180_000);

  it('a destination container that fails mid-sync fails the task run; the committed state is what it acknowledged', async () => {
    if (!topology) return;
    const { server, everything } = topology;
    const api = await userApi(server, 'admin');
    expect((await api.putSecret(NS, 'pg-url', topology.db.url)).status).toBeLessThan(300);
    expect((await api.putFlow(NS, 'fails', syncFlow('k8s_fails', { fail_after_records: 120 }))).status).toBe(
      200,
    );
    const id = await api.run(NS, 'fails');
    const job = await explained(everything(), () => newJob(apis, OWNER, new Set(), 1));
    const exits = await playPod(job);
    // The destination's exit is the runner's to report: it fails the task run and ends itself.
    expect(exits.destination).toMatchObject({ code: 1 });
    expect(exits.runner?.code).not.toBe(0);
    await writeJobPodStatus(apis, job, {
      phase: 'Failed',
      containerStatuses: (job.spec?.template.spec?.containers ?? []).map((c) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode: exits[c.name]?.code ?? 1, reason: 'Error' } },
      })),
    });

    const execution = await explained(everything(), () => api.waitFor(id, ended, 60_000));
    expect(execution.state).toBe('FAILED');
    const [run] = execution.taskRuns;
    expect((run as { error?: string } | undefined)?.error).toContain('injected failure after 120 records');
    // States every 50 records: the destination acknowledged 100, received 120.
    expect(await tableIds('k8s_fails')).toEqual(range(1, 100));
    const commits = await ledger('fails');
    expect(commits.reduce((sum, c) => sum + c.records, 0)).toBe(100);
    const { rows } = await sql.query<{ state: string }>(
      `SELECT state FROM sync_states WHERE namespace = $1 AND flow_id = $2`,
      [NS, 'fails'],
    );
    expect(rows.map((r) => JSON.parse(r.state) as unknown)).toEqual([
      { type: 'STREAM', stream: { stream_descriptor: { name: 'users' }, stream_state: { cursor: 100 } } },
    ]);
    await explained(everything(), () => jobGone(apis, job));
    await secretGone(apis, job);
  }, 180_000);
});
