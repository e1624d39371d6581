import { randomBytes } from 'node:crypto';
import { ended, explained, freePort, noContainersLeft, runningContainerOf, userApi } from '@sluice/testing';
import { dockerFlow, useDockerTopology } from './docker-support';

/**
 * A cancel that reaches a container whose runner is still starting. The
 * runners here are given a SLUICE_API_URL where nothing listens, so each one
 * stays in its first call (fetching its task, before it handles any signal)
 * for as long as the test needs; the executor still reaches the server and
 * learns of the cancel from its heartbeat. The engine's init, PID 1 of the
 * container, passes the stop's TERM on and the runner ends at once (exit code
 * 143). As PID 1 itself the runner would ignore the TERM and be killed at the
 * end of the grace (137).
 */

const OWNER = `cancel-${randomBytes(3).toString('hex')}`;

const topology = useDockerTopology(OWNER, {
  executorEnv: async () => ({ SLUICE_API_URL: `http://127.0.0.1:${await freePort()}` }),
});

describe('docker executor: a cancel while the runner starts', () => {
  it.each([
    ['busybox-static, injected runner', () => topology.fx.busybox, ''],
    ['glibc without libstdc++, injected runner', () => topology.fx.glibc, ''],
    ['the runner image, inject_runner: false', () => topology.fx.runner, ', inject_runner: false'],
  ])(
    'ends the container at the TERM, before the task started (%s)',
    async (_, image, extra) => {
      const { fx, server, everything } = topology;
      const api = await userApi(server, 'admin');
      const name = `early-${randomBytes(3).toString('hex')}`;
      const flow = dockerFlow(image(), ['sh', '-c', 'echo task-started; sleep 60'], extra);
      expect((await api.putFlow('cancel', name, `retry: { max_attempts: 1 }\n${flow}`)).status).toBe(200);
      const id = await api.run('cancel', name);
      const container = await explained(everything(), () => runningContainerOf(fx.docker, OWNER));
      await explained(everything(), () =>
        api.waitFor(id, (e) => e.taskRuns[0]?.externalRef === container.Id, 30_000),
      );

      expect((await api.call('POST', `/api/v1/executions/${id}/cancel`)).status).toBeLessThan(300);
      const done = await explained(everything(), () => api.waitFor(id, ended, 60_000));
      expect(done.state).toBe('CANCELLED');
      const detail = await api.call('GET', `/api/v1/executions/${id}`);
      const [run] = detail.body.taskRuns as Array<{
        id: string;
        state: string;
        reason: string | null;
        error: string | null;
      }>;
      // The runner never reported, so the executor, which stopped the container for the cancel, ends the
      // task run CANCELLED itself (not `lost`). 143 is the TERM: the kill at the end of the grace would be 137.
      expect([run?.state, run?.reason]).toEqual(['CANCELLED', 'cancelled']);
      expect(run?.error).toContain('exited with code 143');
      expect(await api.logs(run!.id)).toEqual([]);
      expect(await noContainersLeft(fx.docker, OWNER)).toEqual([]);
    },
    120_000,
  );
});
