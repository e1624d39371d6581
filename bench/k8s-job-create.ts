// Claim → Job created through the kubernetes executor, beside the API server's own Job create
// in the same run. A throwaway PostgreSQL holds BENCH_ROUNDS queued kubernetes task runs; each
// round claims one (the store's claim), starts it (`KubernetesExecutor.start`: the token
// Secret, the Job, the Secret's owner reference), then creates the same Job manifest under
// another name with one bare call. Needs a Kubernetes API server:
// `eval "$(bash scripts/kube-apiserver.sh)"`, then `pnpm bench k8s-job-create`.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jobManifest, KubernetesExecutor, noopLogger } from '@sluice/executors';
import type { ClaimedTaskRun } from '@sluice/protocol';
import { claimTaskRuns, createPool, migrate, type ClaimedTaskRunRow } from '@sluice/store';
import { databaseUrl, InMemoryExecutorProtocol, startTestPostgres, withAdmin } from '@sluice/testing';
// The kubernetes tests' namespace helper: a fresh namespace, its client, and its removal.
import { createNamespace } from '../packages/executors/test/kubernetes-fixtures';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const OWNER = 'bench-k8s';
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;
const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

/** The claimed row as the instance hands it to its executor (the run token is minted by the server). */
function claimedRun(row: ClaimedTaskRunRow): ClaimedTaskRun {
  return {
    taskRunId: row.id,
    executionId: row.executionId,
    taskId: row.taskId,
    attempt: row.attempt,
    fence: row.fence,
    executor: row.executor as ClaimedTaskRun['executor'],
    timeoutMs: row.timeoutMs,
    task: row.spec as ClaimedTaskRun['task'],
    runToken: `bench-${randomBytes(24).toString('hex')}`,
  };
}

export async function main(): Promise<void> {
  if (!process.env.KUBECONFIG) {
    console.log('skipped: needs a Kubernetes API server (eval "$(bash scripts/kube-apiserver.sh)")');
    return;
  }
  const ns = await createNamespace('bench-create');
  const client = ns.client;
  const pg = await startTestPostgres();
  const executor = new KubernetesExecutor({ client, ownerId: OWNER, runnerImage: 'sluice/runner:bench' });
  const ctx = {
    protocol: new InMemoryExecutorProtocol({ unknownTaskRuns: 'accept' }),
    runnerApiUrl: 'http://sluice:8081',
    log: noopLogger,
  };
  try {
    await withAdmin(pg.adminUrl, (c) => c.query('CREATE DATABASE bench_k8s'));
    const url = databaseUrl(pg.adminUrl, 'bench_k8s');
    await migrate(url);
    const pool = createPool(url, { max: 1 });
    await pool.query(
      `INSERT INTO executions (id, workspace, namespace, flow_id, definition, state)
       VALUES ('00000000-0000-4000-8000-000000000001', 'bench', 'bench', 'bench', '{}', 'RUNNING')`,
    );
    await pool.query(
      `INSERT INTO task_runs (id, execution_id, task_id, attempt, max_attempts, state, executor_type, pool,
                              executor, spec, timeout_ms, available_at, created_at)
       SELECT gen_random_uuid(), '00000000-0000-4000-8000-000000000001', 't' || i, 1, 1, 'QUEUED', 'kubernetes',
              'default', '{"type":"kubernetes","pool":"default","image":"busybox:1.36"}',
              '{"type":"command","command":["true"]}', 60000, now(), now() + i * interval '1 microsecond'
       FROM generate_series(1, $1) AS i`,
      [ROUNDS + 5],
    );
    const claimToJob: number[] = [];
    const start: number[] = [];
    const bareJob: number[] = [];
    const bareSecret: number[] = [];
    for (let i = 0; i < ROUNDS + 5; i += 1) {
      const t0 = process.hrtime.bigint();
      const [row] = await claimTaskRuns(pool, {
        ownerId: OWNER,
        executorTypes: ['kubernetes'],
        pools: ['default'],
        limit: 1,
      });
      if (!row) throw new Error('the queue ran dry');
      const run = claimedRun(row);
      const t1 = process.hrtime.bigint();
      const handle = await executor.start(run, ctx);
      const total = ms(t0);
      const started = ms(t1);
      // The peer: the same manifest, one create call; and one Secret create.
      const manifest = jobManifest({
        run,
        ownerId: `${OWNER}-peer`,
        runnerApiUrl: 'http://sluice:8081',
        runnerImage: 'sluice/runner:bench',
        defaultResources: {},
      });
      manifest.metadata = { ...manifest.metadata, name: `peer-${i}-${randomBytes(3).toString('hex')}` };
      const t2 = process.hrtime.bigint();
      await client.createJob(manifest);
      const job = ms(t2);
      const t3 = process.hrtime.bigint();
      await client.createSecret({ metadata: { name: `peer-${i}` }, stringData: { k: run.runToken } });
      const secret = ms(t3);
      // Untimed: end the round's work, so every round meets the same API server.
      await executor.cancel(handle);
      await executor.wait(handle);
      await client.deleteJob(manifest.metadata.name ?? '');
      await client.deleteSecret(`peer-${i}`);
      // The first rounds warm up connections and caches.
      if (i < 5) continue;
      claimToJob.push(total);
      start.push(started);
      bareJob.push(job);
      bareSecret.push(secret);
    }
    await pool.end();
    const row = (xs: number[]) => ({ p50: +pct(xs, 0.5).toFixed(1), p99: +pct(xs, 0.99).toFixed(1) });
    const result = {
      claimToJobCreatedMs: row(claimToJob),
      executorStartMs: row(start),
      apiServerJobCreateMs: row(bareJob),
      apiServerSecretCreateMs: row(bareSecret),
    };
    console.log('\n| measure | p50 ms | p99 ms |\n|---|---:|---:|');
    const line = (name: string, r: { p50: number; p99: number }) =>
      console.log(`| ${name} | ${r.p50} | ${r.p99} |`);
    line('claim → Job created (claim + Secret + Job + owner patch)', result.claimToJobCreatedMs);
    line('executor start alone (Secret + Job + owner patch)', result.executorStartMs);
    line('API server: one Job create (same manifest)', result.apiServerJobCreateMs);
    line('API server: one Secret create', result.apiServerSecretCreateMs);
    const date = new Date().toISOString().slice(0, 10);
    const out = path.join(__dirname, 'results', `k8s-job-create-${date}.json`);
    mkdirSync(path.dirname(out), { recursive: true });
    const machine = {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      node: process.version,
      load: os.loadavg(),
    };
    writeFileSync(
      out,
      `${JSON.stringify({ bench: 'k8s-job-create', date, rounds: ROUNDS, machine, result, samples: { claimToJob, start, bareJob, bareSecret } }, null, 2)}\n`,
    );
    console.log(`wrote ${path.relative(process.cwd(), out)}`);
  } finally {
    await executor.shutdown();
    await pg.stop();
    await ns.delete();
  }
}
