import { randomBytes } from 'node:crypto';
import {
  ended,
  explained,
  noContainersLeft,
  runningContainerOf,
  sleep,
  startServer,
  userApi,
} from '@sluice/testing';
import { dockerFlow, useDockerTopology } from './docker-support';

/**
 * docs/decisions.md §6 and §9: a docker task keeps running while the server
 * restarts. The server is killed with SIGKILL mid-task (no goodbye to anyone)
 * and a new one starts a few seconds later at the same address, on the same
 * database. Meanwhile the runner in the container buffers its log lines and
 * resends them, and the executor's heartbeats and claims wait for the server.
 *
 * The watchdog runs every second with the default PIPELINE_HEARTBEAT_TIMEOUT
 * (30 s): an outage shorter than that must not cost the task run.
 */

const OWNER = `restart-${randomBytes(3).toString('hex')}`;
const LINES = 30;
/** About 12 s of output, then an output value. */
const TASK = [
  'sh',
  '-c',
  `i=1; while [ $i -le ${LINES} ]; do echo line-$i; i=$((i + 1)); sleep 0.4; done; ` +
    `echo "lines=${LINES}" >> "$SLUICE_OUTPUTS"`,
];
/** How long no server answers. */
const OUTAGE_MS = 3_000;

const topology = useDockerTopology(OWNER, { jobsEnv: { PIPELINE_JOB_WATCHDOG_INTERVAL: '1s' } });

describe('docker executor: a server restart', () => {
  it('keeps a docker task running through a server kill -9: same container, every log line once, its output', async () => {
    const { fx, db, executor, everything } = topology;
    const server = topology.server;
    const api = await userApi(server, 'admin');
    expect((await api.putFlow('restart', 'long', dockerFlow(fx.busybox, TASK))).status).toBe(200);
    const id = await api.run('restart', 'long');
    const container = await explained(everything(), () => runningContainerOf(fx.docker, OWNER));
    // Killed once the task has printed a few lines and the server knows its container.
    const running = await explained(everything(), () =>
      api.waitFor(id, (e) => e.taskRuns[0]?.externalRef === container.Id, 30_000),
    );
    const taskRunId = running.taskRuns[0]!.id;
    await explained(everything(), async () => {
      while (!(await api.logs(taskRunId)).some((l) => l.line === 'line-3')) await sleep(100);
    });

    server.proc.kill('SIGKILL');
    await server.exited;
    await sleep(OUTAGE_MS);
    // The task went on printing with no server to take its lines.
    expect((await fx.docker.getContainer(container.Id).inspect()).State.Running).toBe(true);
    topology.server = await startServer(db.url, {}, server.ports);

    const done = await explained(everything(), () => api.waitFor(id, ended, 90_000));
    expect(done.state).toBe('SUCCEEDED');
    expect(done.taskRuns.map((r) => [r.attempt, r.state, r.reason])).toEqual([[1, 'SUCCEEDED', null]]);
    expect(done.taskRuns[0]!.externalRef).toBe(container.Id);
    expect(done.taskRuns[0]!.outputs).toEqual({ lines: String(LINES) });
    // A batch whose answer the kill cut off is resent with the same seqs; the server keeps one copy of each.
    const logs = await api.logs(taskRunId);
    expect(logs.filter((l) => l.stream === 'stdout').map((l) => l.line)).toEqual(
      Array.from({ length: LINES }, (_, i) => `line-${i + 1}`),
    );
    expect(logs.map((l) => l.seq)).toEqual(Array.from({ length: logs.length }, (_, i) => i + 1));
    expect(await noContainersLeft(fx.docker, OWNER)).toEqual([]);

    // The executor lived through the outage and claims from the new server.
    expect(executor.proc.exitCode).toBeNull();
    expect((await api.putFlow('restart', 'after', dockerFlow(fx.busybox, ['echo', 'after']))).status).toBe(
      200,
    );
    const after = await explained(everything(), async () =>
      api.waitFor(await api.run('restart', 'after'), ended, 60_000),
    );
    expect(after.taskRuns.map((r) => [r.state, r.ownerId])).toEqual([['SUCCEEDED', OWNER]]);
  }, 180_000);
});
