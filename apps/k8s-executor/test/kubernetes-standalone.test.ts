import { randomBytes } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import {
  createReadyNamespace,
  createTestDatabase,
  ended,
  eventually,
  explained,
  SLUICE,
  startStandalone,
  userApi,
  type ServerProcess,
  type TestDatabase,
} from '@sluice/testing';
import { containerEnv, describeKube, kube, kubeApis, runHere } from './kube-flow-fixtures';

/**
 * A standalone server in a pod (KUBERNETES_SERVICE_HOST set): `auto` turns the kubernetes
 * executor on by the Job dry run, its task pods reach its runner API at K8S_EXECUTOR_SERVER_ADDR
 * with their run token only. The test plays the kubelet as in kubernetes-flows.test.ts.
 */

const OWNER = `standalone-${randomBytes(3).toString('hex')}`;
const NAMESPACE = `sluice-sa-${randomBytes(3).toString('hex')}`;

describeKube('a standalone server in a pod', () => {
  const apis = kubeApis(NAMESPACE);
  const { core, batch } = apis;
  let db: TestDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    await createReadyNamespace(core, NAMESPACE);
    db = await createTestDatabase();
    server = await startStandalone(db.url, {
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      KUBECONFIG: kube ?? '',
      DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      K8S_EXECUTOR_OWNER_ID: OWNER,
      K8S_EXECUTOR_NAMESPACE: NAMESPACE,
      K8S_EXECUTOR_JOB_WORKER_INTERVAL: '200ms',
    });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    await core.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
  });

  it('detects kubernetes and runs a task in a Job whose pod reaches the server with its run token', async () => {
    const api = await userApi(server, 'admin');
    const flow = [
      'tasks:',
      '  - id: main',
      '    type: command',
      '    executor: { type: kubernetes, image: "busybox:1.36", inject_runner: false }',
      '    command: ["echo", "hello from a standalone pod"]',
      '',
    ].join('\n');
    expect((await api.putFlow('kube', 'hello', flow)).status).toBe(200);
    const id = await api.run('kube', 'hello');
    const job: V1Job = await explained({ server }, () =>
      eventually(
        'the Job',
        async () =>
          (await batch.listNamespacedJob({ namespace: NAMESPACE, labelSelector: `sluice.io/owner=${OWNER}` }))
            .items[0],
        30_000,
        100,
      ),
    );
    const container = job.spec?.template.spec?.containers[0];
    const env = await containerEnv(apis, container);
    // The pod's only credential is its run token: the server's URL (K8S_EXECUTOR_SERVER_ADDR defaults to its own).
    expect(Object.keys(env).sort()).toEqual(
      ['HOME', 'NODE_OPTIONS', 'PATH', 'SLUICE_API_URL', 'SLUICE_RUN_TOKEN', 'SLUICE_TASK_RUN_ID'].sort(),
    );
    expect(env.SLUICE_API_URL).toBe(server.internalUrl);
    const { code } = await runHere(process.execPath, [SLUICE, 'exec'], env);
    expect(code).toBe(0);
    const pod = (
      await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `job-name=${job.metadata?.name}` })
    ).items[0];
    await core.replaceNamespacedPodStatus({
      name: pod?.metadata?.name ?? '',
      namespace: NAMESPACE,
      body: { ...pod, status: { ...pod?.status, phase: 'Succeeded' } },
    });
    const execution = await explained({ server }, () => api.waitFor(id, ended, 60_000));
    expect(execution.taskRuns[0]).toMatchObject({ state: 'SUCCEEDED', ownerId: OWNER });
    const logs = await api.logs(execution.taskRuns[0]!.id);
    expect(logs.filter((l) => l.stream === 'stdout').map((l) => l.line)).toEqual([
      'hello from a standalone pod',
    ]);
  }, 120_000);
});
