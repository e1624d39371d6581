import { request } from 'node:https';
import { kubeConfigFromEnv, type KubeAccess } from '@sluice/testing';

/**
 * The private API server of `scripts/kube-apiserver.sh` does what the kubernetes executor's
 * tests rely on: the controller manager creates a Job's pod, a test playing the kubelet writes
 * the pod's status, and the Job controller completes the Job. Skipped without KUBECONFIG.
 */
const kube = kubeConfigFromEnv();
const describeWithKube = kube ? describe : describe.skip;

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

/** One JSON request to the API server; every status is returned, none thrown. */
function api(
  access: KubeAccess,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<Reply>((resolve, reject) => {
    const req = request(
      `${access.server}${path}`,
      {
        method,
        headers: {
          authorization: `Bearer ${access.token}`,
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': contentType }),
        },
        ...(access.caData ? { ca: access.caData } : {}),
        rejectUnauthorized: !access.insecureSkipTlsVerify,
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Polls `probe` until it returns a value, or fails after `ms` with `what`. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const job = (name: string) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, labels: { 'sluice.io/test': 'kube-apiserver' } },
  spec: {
    backoffLimit: 0,
    template: {
      spec: { restartPolicy: 'Never', containers: [{ name: 'task', image: 'busybox', command: ['true'] }] },
    },
  },
});

describeWithKube('the private API server (scripts/kube-apiserver.sh)', () => {
  const access = kube as KubeAccess;
  const namespace = `sluice-kube-test-${process.pid}-${Date.now().toString(36)}`;
  const jobs = `/apis/batch/v1/namespaces/${namespace}/jobs`;

  beforeAll(async () => {
    const created = await api(access, 'POST', '/api/v1/namespaces', { metadata: { name: namespace } });
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    await api(access, 'DELETE', `/api/v1/namespaces/${namespace}`);
  });

  it('accepts a dryRun=All Job create without storing the Job', async () => {
    const dry = await api(access, 'POST', `${jobs}?dryRun=All`, job('dry'));
    expect(dry.status).toBe(201);
    expect((await api(access, 'GET', `${jobs}/dry`)).status).toBe(404);
  });

  it("creates a Job's pod, which stays Pending, and completes the Job once the pod's status says Succeeded", async () => {
    expect((await api(access, 'POST', jobs, job('run'))).status).toBe(201);

    const pod = await eventually('the controller manager creating the pod', async () => {
      const list = await api(
        access,
        'GET',
        `/api/v1/namespaces/${namespace}/pods?labelSelector=job-name%3Drun`,
      );
      const items = list.body.items as
        { metadata: { name: string }; status?: { phase?: string } }[] | undefined;
      return items?.[0];
    });
    // No scheduler, no kubelet: nothing moves the pod on but the test.
    expect(pod.status?.phase).toBe('Pending');

    const now = new Date().toISOString();
    const status = await api(
      access,
      'PATCH',
      `/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}/status`,
      {
        status: {
          phase: 'Succeeded',
          containerStatuses: [
            {
              name: 'task',
              image: 'busybox',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now } },
            },
          ],
        },
      },
      'application/merge-patch+json',
    );
    expect(status.status).toBe(200);

    const done = await eventually('the Job controller completing the Job', async () => {
      const { body } = await api(access, 'GET', `${jobs}/run`);
      const jobStatus = body.status as {
        succeeded?: number;
        conditions?: { type: string; status: string }[];
      };
      return jobStatus.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')
        ? jobStatus
        : undefined;
    });
    expect(done.succeeded).toBe(1);
  }, 150_000);
});
