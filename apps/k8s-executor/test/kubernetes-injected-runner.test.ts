import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_RUNNER_SEA_DIR, ended, eventually, explained, LOADER_NAME, userApi } from '@sluice/testing';
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
 * `inject_runner: true` end to end in distributed mode. The test plays the kubelet: it runs the
 * init container's command (`sluice runner-install /sluice-bin`, the runner image's binary being
 * the self-contained runner apps/runner builds) into a temporary directory standing in for the
 * emptyDir, then the task container's command through the loader installed there, with the
 * pod's environment; then writes the pod Succeeded.
 */

const OWNER = `k8s-inj-${randomBytes(3).toString('hex')}`;
const NAMESPACE = `sluice-inj-${randomBytes(3).toString('hex')}`;

/** The self-contained runner, built here when a run without `pnpm build` lacks it; why not, otherwise. */
function seaRunner(): string | null {
  if (seaRunnerBuilt()) return null;
  try {
    execFileSync('pnpm', ['--filter', '@sluice/app-runner', 'build'], {
      cwd: resolve(__dirname, '..', '..', '..'),
      stdio: 'pipe',
      timeout: 600_000,
    });
  } catch (err) {
    return `building the self-contained runner failed: ${err instanceof Error ? err.message : String(err)}`;
  }
  return seaRunnerBuilt() ? null : `the runner build left no ${DEFAULT_RUNNER_SEA_DIR}/sluice`;
}

const unavailable = kube ? seaRunner() : null;
if (unavailable) {
  console.warn(`SKIPPED kubernetes-injected-runner: ${unavailable}`);
  describe('kubernetes injected runner', () => {
    it.skip(`cannot run without the self-contained runner: ${unavailable}`, () => {});
  });
}

const apis = kubeApis(NAMESPACE);
const topology = useKubeTopology(apis, OWNER, Boolean(kube) && !unavailable);

(unavailable ? describe.skip : describeKube)(
  'kubernetes executor: a flow through the injected runner',
  () => {
    let emptyDir: string;
    beforeEach(() => {
      emptyDir = mkdtempSync(join(tmpdir(), 'sluice-bin-'));
    });
    afterEach(() => rmSync(emptyDir, { recursive: true, force: true }));

    /** A path inside a container, here: the emptyDir's mount is the temporary directory. */
    const here = (path: string) =>
      path === RUNNER_IMAGE_BINARY
        ? join(DEFAULT_RUNNER_SEA_DIR, 'sluice')
        : path.replace(/^\/sluice-bin(?=\/|$)/, emptyDir);

    it('installs the runner by the init container, runs the task through it, ends SUCCEEDED with logs and outputs; Job and Secret go', async () => {
      if (!topology) return;
      const { server, everything } = topology;
      const api = await userApi(server, 'admin');
      const flow = [
        'retry: { max_attempts: 1 }',
        'tasks:',
        '  - id: main',
        '    type: command',
        '    executor: { type: kubernetes, image: "busybox:1.36" }',
        `    command: ${JSON.stringify(['sh', '-c', 'echo hello from the injected runner; echo "answer=42" >> "$SLUICE_OUTPUTS"'])}`,
        '',
      ].join('\n');
      expect((await api.putFlow('kube', 'injected', flow)).status).toBe(200);
      const id = await api.run('kube', 'injected');
      const job = await explained(everything(), () => newJob(apis, OWNER, new Set(), 1));
      const spec = job.spec?.template.spec;

      // The init container: `sluice runner-install /sluice-bin` from the runner image, into the emptyDir.
      const init = spec?.initContainers?.[0];
      expect(init?.command?.[0]).toBe(RUNNER_IMAGE_BINARY);
      expect(spec?.volumes).toEqual([{ name: 'sluice-bin', emptyDir: {} }]);
      const [initCommand = '', ...initArgs] = (init?.command ?? []).map(here);
      const installed = await runHere(initCommand, initArgs, { PATH: process.env.PATH ?? '' });
      expect(installed).toMatchObject({ code: 0 });
      expect(existsSync(join(emptyDir, 'sluice'))).toBe(true);
      expect(existsSync(join(emptyDir, 'lib', LOADER_NAME))).toBe(true);

      // The task container: the runner through the loader installed beside it, with the pod's environment.
      const task = spec?.containers[0];
      expect(task?.volumeMounts).toEqual([{ name: 'sluice-bin', mountPath: '/sluice-bin' }]);
      const [taskCommand = '', ...taskArgs] = (task?.command ?? []).map(here);
      expect(taskCommand).toBe(join(emptyDir, 'lib', LOADER_NAME));
      const env = await containerEnv(apis, task);
      const runner = await runHere(taskCommand, taskArgs, env);
      expect(runner).toMatchObject({ code: 0 });
      await writeJobPodStatus(apis, job, { phase: 'Succeeded' });

      const execution = await explained(everything(), () => api.waitFor(id, ended, 60_000));
      expect(execution.state).toBe('SUCCEEDED');
      const [run] = execution.taskRuns;
      expect(run).toMatchObject({ state: 'SUCCEEDED', ownerId: OWNER, externalRef: job.metadata?.name });
      expect(run!.outputs).toEqual({ answer: '42' });
      const logs = await api.logs(run!.id);
      expect(logs.filter((l) => l.stream === 'stdout').map((l) => l.line)).toEqual([
        'hello from the injected runner',
      ]);
      await explained(everything(), () => jobGone(apis, job));
      await secretGone(apis, job);
      await eventually(
        'nothing of the owner left',
        async () => {
          const jobs = await apis.batch.listNamespacedJob({
            namespace: NAMESPACE,
            labelSelector: `sluice.io/owner=${OWNER}`,
          });
          return jobs.items.length === 0;
        },
        30_000,
        200,
      );
    }, 180_000);
  },
);
