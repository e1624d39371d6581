// One reconcile pass of the kubernetes executor (runKubernetesCleanup) in a namespace with N
// own and N foreign Jobs (each own Job with its token Secret): wall time, the API calls the pass
// makes (counted by a proxy in front of the real API server) and memory. Cases: steady state
// (every own Job already watched here: kept), after a restart (nothing watched, every task run
// still running: adopted) and, once at the largest N, every task run ended (deleted).
// Needs a Kubernetes API server: `eval "$(bash scripts/kube-apiserver.sh)"`, then
// `node --expose-gc bench/run.cjs k8s-reconcile` (without --expose-gc memory is read unsettled).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KUBE_ANNOTATIONS, KUBE_LABELS, KubeClient, KubernetesExecutor, noopLogger } from '@sluice/executors';
import { runKubernetesCleanup } from '@sluice/owner-cleanup';
import { InMemoryExecutorProtocol } from '@sluice/testing';
// The kubernetes tests' helpers: a fresh namespace, and a request-logging proxy to the API server.
import { createNamespace, type KubeNamespace } from '../packages/executors/test/kubernetes-fixtures';
import { startKubeProxy, type KubeProxy } from '../packages/executors/test/kubernetes-proxy';

const SIZES = (process.env.BENCH_SIZES ?? '200,1000').split(',').map(Number);
const OWN = 'bench-own';
const FOREIGN = 'bench-foreign';
const CREATE_CONCURRENCY = 8;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface PassFigures {
  case: string;
  own: number;
  foreign: number;
  ms: number;
  apiCalls: number;
  byKind: Record<string, number>;
  stillRunningQuestions: number;
  heapDeltaMb: number;
  heapRetainedMb: number;
  rssDeltaMb: number;
  result: { kept: number; adopted: number; deletedJobs: number; deletedSecrets: number };
}

const gc = (globalThis as { gc?: () => void }).gc;
const mb = (bytes: number) => +(bytes / 1024 / 1024).toFixed(1);

async function inParallel<T>(items: T[], work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CREATE_CONCURRENCY }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

/** `count` Jobs of `owner` that create no pod (parallelism 0), labelled as the executor labels its own. */
async function createJobs(
  ns: KubeNamespace,
  owner: string,
  count: number,
  withSecrets: boolean,
): Promise<void> {
  await inParallel(
    Array.from({ length: count }, (_, i) => i),
    async (i) => {
      const taskRunId = randomUUID();
      const name = `${owner}-${i}-${randomBytes(3).toString('hex')}`;
      const labels = {
        [KUBE_LABELS.owner]: owner,
        [KUBE_LABELS.taskRun]: taskRunId,
        [KUBE_LABELS.attempt]: '1',
      };
      const job = await ns.client.createJob({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          name,
          labels,
          annotations: {
            [KUBE_ANNOTATIONS.fence]: '1',
            [KUBE_ANNOTATIONS.execution]: randomUUID(),
            [KUBE_ANNOTATIONS.task]: 'main',
            [KUBE_ANNOTATIONS.pool]: 'default',
            [KUBE_ANNOTATIONS.timeoutMs]: '3600000',
          },
        },
        spec: {
          parallelism: 0,
          backoffLimit: 0,
          template: {
            metadata: { labels },
            spec: { restartPolicy: 'Never', containers: [{ name: 'task', image: 'busybox:1.36' }] },
          },
        },
      });
      if (!withSecrets) return;
      await ns.client.createSecret({
        metadata: {
          name: `${name}-token`,
          labels,
          ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: job.metadata?.uid ?? '' }],
        },
        stringData: { 'run-token': randomBytes(24).toString('hex') },
      });
    },
  );
}

/** Waits until the proxy has seen no request for `quietMs`. */
async function quiet(proxy: KubeProxy, quietMs = 3_000): Promise<void> {
  let count = -1;
  while (proxy.requests.length !== count) {
    count = proxy.requests.length;
    await new Promise((resolve) => setTimeout(resolve, quietMs));
  }
}

function kindOf(request: string): string {
  const [method = '', url = ''] = request.split(' ');
  const resource = /\/(jobs|secrets|pods|events)(\/|\?|$)/.exec(url)?.[1] ?? 'other';
  return `${method} ${resource}${url.includes(`${resource}/`) ? '/<name>' : ''}`;
}

async function pass(
  label: string,
  ns: KubeNamespace,
  size: number,
  passProxy: KubeProxy,
  executor: KubernetesExecutor,
  running: boolean,
): Promise<PassFigures> {
  const client = new KubeClient(passProxy.config, ns.name);
  let questions = 0;
  const protocol = {
    isStillRunning: async () => {
      questions += 1;
      return running;
    },
  };
  const ctx = {
    protocol: new InMemoryExecutorProtocol(),
    runnerApiUrl: 'http://sluice:8081',
    log: noopLogger,
  };
  gc?.();
  const before = process.memoryUsage();
  const firstRequest = passProxy.requests.length;
  const t0 = process.hrtime.bigint();
  const result = await runKubernetesCleanup({
    client,
    executor,
    ownerId: OWN,
    protocol,
    ctx,
    instance: { adopt: () => true },
    log: noopLogger,
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const after = process.memoryUsage();
  gc?.();
  const settled = process.memoryUsage();
  const requests = passProxy.requests.slice(firstRequest);
  const byKind: Record<string, number> = {};
  for (const request of requests) byKind[kindOf(request)] = (byKind[kindOf(request)] ?? 0) + 1;
  return {
    case: label,
    own: size,
    foreign: size,
    ms: Math.round(ms),
    apiCalls: requests.length,
    byKind,
    stillRunningQuestions: questions,
    heapDeltaMb: mb(after.heapUsed - before.heapUsed),
    heapRetainedMb: mb(settled.heapUsed - before.heapUsed),
    rssDeltaMb: mb(after.rss - before.rss),
    result: {
      kept: result.kept.length,
      adopted: result.adopted.length,
      deletedJobs: result.deletedJobs.length,
      deletedSecrets: result.deletedSecrets.length,
    },
  };
}

/** The floor: the pass's two paged lists alone (this owner's Jobs, then its Secrets), by bare calls. */
async function floor(ns: KubeNamespace, size: number, passProxy: KubeProxy): Promise<PassFigures> {
  const client = new KubeClient(passProxy.config, ns.name);
  gc?.();
  const before = process.memoryUsage();
  const firstRequest = passProxy.requests.length;
  const t0 = process.hrtime.bigint();
  const jobs = await client.listJobs(`${KUBE_LABELS.owner}=${OWN}`);
  const secrets = await client.listSecrets(`${KUBE_LABELS.owner}=${OWN}`);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const after = process.memoryUsage();
  const requests = passProxy.requests.slice(firstRequest);
  const byKind: Record<string, number> = {};
  for (const request of requests) byKind[kindOf(request)] = (byKind[kindOf(request)] ?? 0) + 1;
  if (jobs.length !== size || secrets.length !== size)
    throw new Error(`listed ${jobs.length} Jobs, ${secrets.length} Secrets`);
  return {
    case: 'floor: the two paged lists alone',
    own: size,
    foreign: size,
    ms: Math.round(ms),
    apiCalls: requests.length,
    byKind,
    stillRunningQuestions: 0,
    heapDeltaMb: mb(after.heapUsed - before.heapUsed),
    heapRetainedMb: 0,
    rssDeltaMb: mb(after.rss - before.rss),
    result: { kept: 0, adopted: 0, deletedJobs: 0, deletedSecrets: 0 },
  };
}

export async function main(): Promise<void> {
  if (!process.env.KUBECONFIG) {
    console.log('skipped: needs a Kubernetes API server (eval "$(bash scripts/kube-apiserver.sh)")');
    return;
  }
  const figures: PassFigures[] = [];
  let created = 0;
  const ns = await createNamespace('bench-reconcile');
  const passProxy = await startKubeProxy();
  const executorProxy = await startKubeProxy();
  try {
    for (const size of SIZES) {
      const t0 = Date.now();
      await createJobs(ns, OWN, size - created, true);
      await createJobs(ns, FOREIGN, size - created, false);
      created = size;
      console.log(
        `${size} own Jobs (with Secrets) and ${size} foreign Jobs in ${ns.name} (${Date.now() - t0} ms)`,
      );
      // Steady state: every own Job watched here already (adopted untimed, its first looks done).
      const watching = new KubernetesExecutor({
        client: new KubeClient(executorProxy.config, ns.name),
        ownerId: OWN,
        runnerImage: 'sluice/runner:bench',
        podWatch: false,
        pollIntervalMs: 3_600_000,
        heartbeatIntervalMs: 3_600_000,
      });
      const ctx = {
        protocol: new InMemoryExecutorProtocol(),
        runnerApiUrl: 'http://sluice:8081',
        log: noopLogger,
      };
      for (const job of await ns.client.listJobs(`${KUBE_LABELS.owner}=${OWN}`)) watching.adopt(job, ctx);
      await quiet(executorProxy);
      for (let round = 0; round < ROUNDS; round += 1) {
        figures.push(await floor(ns, size, passProxy));
        figures.push(await pass('steady: all watched here (kept)', ns, size, passProxy, watching, true));
      }
      await watching.shutdown();
      // After a restart: nothing watched, every task run still running.
      const restarted = new KubernetesExecutor({
        client: new KubeClient(executorProxy.config, ns.name),
        ownerId: OWN,
        runnerImage: 'sluice/runner:bench',
        podWatch: false,
        pollIntervalMs: 3_600_000,
        heartbeatIntervalMs: 3_600_000,
      });
      figures.push(await pass('after a restart: all adopted', ns, size, passProxy, restarted, true));
      await restarted.shutdown();
      await quiet(executorProxy);
      console.log(JSON.stringify(figures.slice(-2)));
    }
    const largest = Math.max(...SIZES);
    const idle = new KubernetesExecutor({
      client: ns.client,
      ownerId: OWN,
      runnerImage: 'sluice/runner:bench',
    });
    figures.push(await pass('all ended: all deleted', ns, largest, passProxy, idle, false));
    await idle.shutdown();
  } finally {
    await passProxy.close();
    await executorProxy.close();
    await ns.delete();
  }
  console.log(
    '\n| case | own + foreign Jobs | ms | API calls | calls by kind | isStillRunning | heap Δ MB (retained) | RSS Δ MB |\n|---|---:|---:|---:|---|---:|---:|---:|',
  );
  for (const f of figures) {
    const kinds = Object.entries(f.byKind)
      .map(([k, n]) => `${k} ×${n}`)
      .join(', ');
    console.log(
      `| ${f.case} | ${f.own} + ${f.foreign} | ${f.ms} | ${f.apiCalls} | ${kinds} | ${f.stillRunningQuestions} | ${f.heapDeltaMb} (${f.heapRetainedMb}) | ${f.rssDeltaMb} |`,
    );
  }
  const date = new Date().toISOString().slice(0, 10);
  const out = path.join(__dirname, 'results', `k8s-reconcile-${date}.json`);
  mkdirSync(path.dirname(out), { recursive: true });
  const machine = {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model,
    node: process.version,
    load: os.loadavg(),
  };
  writeFileSync(
    out,
    `${JSON.stringify({ bench: 'k8s-reconcile', date, gc: Boolean(gc), machine, figures }, null, 2)}\n`,
  );
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
}
