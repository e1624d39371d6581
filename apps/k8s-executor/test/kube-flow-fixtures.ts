import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BatchV1Api, CoreV1Api, KubeConfig, type V1Container, type V1Job } from '@kubernetes/client-node';
import {
  createReadyNamespace,
  DEFAULT_RUNNER_SEA_DIR,
  eventually,
  LOADER_NAME,
  startExecutor,
  useTopology,
  type ServerProcess,
  type Topology,
} from '@sluice/testing';

/**
 * What the end-to-end kubernetes files share: the API clients, a k8s-executor on one
 * namespace, and the test's part as the kubelet (there is none): the pod's environment with
 * its Secret read as the kubelet would, its status written through the status subresource.
 */

export const kube = process.env.KUBECONFIG;

/** `describe`, or a skip that says why when no API server is configured. */
export const describeKube = (name: string, body: () => void): void => {
  if (kube) describe(name, body);
  else
    describe(name, () => {
      it.skip('needs a Kubernetes API server: eval "$(bash scripts/kube-apiserver.sh)" exports KUBECONFIG', () => {});
    });
};

export interface KubeApis {
  core: CoreV1Api;
  batch: BatchV1Api;
  namespace: string;
}

export function kubeApis(namespace: string): KubeApis {
  const config = new KubeConfig();
  config.loadFromDefault();
  return { core: config.makeApiClient(CoreV1Api), batch: config.makeApiClient(BatchV1Api), namespace };
}

/** `sluice k8s-executor` on the namespace, claiming every 200 ms unless `env` says otherwise. */
export function startK8sExecutor(
  server: Pick<ServerProcess, 'internalUrl'>,
  owner: string,
  namespace: string,
  env: Record<string, string> = {},
) {
  return startExecutor(
    server,
    owner,
    {
      SLUICE_EXECUTORS: 'kubernetes',
      KUBECONFIG: kube ?? '',
      K8S_EXECUTOR_NAMESPACE: namespace,
      K8S_EXECUTOR_SERVER_ADDR: server.internalUrl,
      K8S_EXECUTOR_JOB_WORKER_INTERVAL: '200ms',
      ...env,
    },
    'k8s-executor',
  );
}

/**
 * A server, `sluice jobs` and one k8s-executor of `owner` on `apis.namespace`, which is
 * created before the file's tests and deleted after them; null (nothing started) unless `run`.
 */
export function useKubeTopology(apis: KubeApis, owner: string, run: boolean): Topology | null {
  if (!run) return null;
  return useTopology({
    jobsEnv: { PIPELINE_JOB_SCHEDULER_INTERVAL: '200ms' },
    startExecutor: async (server) => {
      await createReadyNamespace(apis.core, apis.namespace);
      return startK8sExecutor(server, owner, apis.namespace);
    },
    cleanup: async () => {
      await apis.core.deleteNamespace({ name: apis.namespace }).catch(() => undefined);
    },
  });
}

/** Where the runner image keeps the runner (job-manifest.ts's init container command names it). */
export const RUNNER_IMAGE_BINARY = '/usr/local/bin/sluice';

/** The self-contained runner apps/runner builds (`pnpm build`), which stands in for the runner image's. */
export const seaRunnerBuilt = (): boolean =>
  existsSync(join(DEFAULT_RUNNER_SEA_DIR, 'sluice')) &&
  existsSync(join(DEFAULT_RUNNER_SEA_DIR, 'lib', LOADER_NAME));

/** The first Job of `owner` with `attempt` that is not in `seen` (then added to it). */
export async function newJob(
  apis: KubeApis,
  owner: string,
  seen: Set<string>,
  attempt: number,
): Promise<V1Job> {
  const job = await eventually(
    `a Job for attempt ${attempt}`,
    async () =>
      (
        await apis.batch.listNamespacedJob({
          namespace: apis.namespace,
          labelSelector: `sluice.io/owner=${owner},sluice.io/attempt=${attempt}`,
        })
      ).items.find((j) => !seen.has(j.metadata?.name ?? '')),
    30_000,
    100,
  );
  seen.add(job.metadata?.name ?? '');
  return job;
}

/** A container's environment as the kubelet gives it: values as they are, secretKeyRefs read from the Secret. */
export async function containerEnv(
  apis: KubeApis,
  container: V1Container | undefined,
): Promise<Record<string, string>> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  for (const variable of container?.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = await apis.core.readNamespacedSecret({
        name: ref.name ?? '',
        namespace: apis.namespace,
      });
      env[variable.name] = Buffer.from(secret.data?.[ref.key] ?? '', 'base64').toString('utf8');
    } else {
      env[variable.name] = variable.value ?? '';
    }
  }
  return env;
}

/** Runs a command here, as a container would run it; resolves with its exit code and output. */
export function runHere(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/** Writes the status of the Job's pod as the kubelet would. */
export async function writeJobPodStatus(
  apis: KubeApis,
  job: V1Job,
  status: Record<string, unknown>,
): Promise<void> {
  const pod = await eventually(
    'the pod of the Job',
    async () =>
      (
        await apis.core.listNamespacedPod({
          namespace: apis.namespace,
          labelSelector: `job-name=${job.metadata?.name}`,
        })
      ).items[0],
    30_000,
    100,
  );
  const current = await apis.core.readNamespacedPod({
    name: pod.metadata?.name ?? '',
    namespace: apis.namespace,
  });
  await apis.core.replaceNamespacedPodStatus({
    name: pod.metadata?.name ?? '',
    namespace: apis.namespace,
    body: { ...current, status: { ...current.status, ...status } },
  });
}

const notFound = (err: { code?: number }) => err.code === 404;

export const jobGone = (apis: KubeApis, job: V1Job) =>
  eventually(
    'the Job deleted',
    () =>
      apis.batch
        .readNamespacedJob({ name: job.metadata?.name ?? '', namespace: apis.namespace })
        .then(() => false, notFound),
    30_000,
    200,
  );

/** The Job's token Secret is gone (the garbage collector takes it with its Job). */
export const secretGone = (apis: KubeApis, job: V1Job) => {
  const name = job.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'SLUICE_RUN_TOKEN')
    ?.valueFrom?.secretKeyRef?.name;
  return eventually(
    'the Secret collected with its Job',
    () =>
      apis.core
        .readNamespacedSecret({ name: name ?? '', namespace: apis.namespace })
        .then(() => false, notFound),
    60_000,
    200,
  );
};
