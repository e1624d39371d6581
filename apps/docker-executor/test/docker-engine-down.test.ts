import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import {
  dockerFixtures,
  explained,
  freePort,
  logLines,
  removeOwned,
  sleep,
  userApi,
  useTopology,
  type DockerFixtures,
} from '@sluice/testing';
import { dockerFlow, startDockerExecutor } from './docker-support';

/**
 * SLUICE_EXECUTORS=docker while the Docker API does not answer: the listed
 * executor is on all the same. The executor reaches the engine through a TCP
 * proxy to the real socket that the test opens and closes, so "down" is a
 * refused connection, as with a stopped daemon.
 */
const OWNER = `down-${randomBytes(3).toString('hex')}`;

class EngineProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  constructor(
    readonly port: number,
    private readonly socketPath: string,
  ) {}

  up(): Promise<void> {
    const server = createServer((client) => {
      const engine = connect(this.socketPath);
      for (const s of [client, engine]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(engine).pipe(client);
    });
    this.server = server;
    return new Promise((resolve) => server.listen(this.port, '127.0.0.1', () => resolve()));
  }

  async down(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }
}

let fx: DockerFixtures;
let proxy: EngineProxy;

const topology = useTopology({
  startExecutor: async (server) => {
    fx = await dockerFixtures();
    const socketPath = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
    proxy = new EngineProxy(await freePort(), socketPath);
    // Down from the start: an explicit list used to refuse to start here.
    return startDockerExecutor(server, OWNER, fx, { DOCKER_HOST: `tcp://127.0.0.1:${proxy.port}` });
  },
  cleanup: async () => {
    await proxy?.down();
    if (fx) await removeOwned(fx.docker, OWNER);
  },
});

const said = (output: string, text: string) =>
  logLines(output).filter((line) => String(line.message).includes(text)).length;

describe('a listed docker executor whose engine does not answer', () => {
  it('starts, claims nothing and is not ready while the engine is down, says so once, and runs the task once it is back', async () => {
    const { server, executor, everything } = topology;
    const started = logLines(executor.output()).find((line) => line.message === 'executor instance started');
    expect(started).toMatchObject({ instanceId: OWNER, executors: ['inline', 'docker'] });
    const ready = `http://127.0.0.1:${String(started?.internalPort)}/ready`;

    const api = await userApi(server, 'admin');
    expect((await api.putFlow('down', 'boxed', dockerFlow(fx.busybox, ['sh', '-c', 'echo hi']))).status).toBe(
      200,
    );
    const id = await api.run('down', 'boxed');
    // Several claim polls and engine checks later: still queued, not failed for an engine that was down.
    await sleep(6_000);
    expect((await api.execution(id)).taskRuns.map((r) => r.state)).toEqual(['QUEUED']);
    const notReady = await fetch(ready);
    expect(notReady.status).toBe(503);
    expect(await notReady.text()).toContain('Docker API does not answer');
    expect(said(executor.output(), 'does not answer; claiming no docker task runs')).toBe(1);

    await proxy.up();
    // No `sluice jobs` here: the execution stays RUNNING, its task run ends.
    const finished = (state: string) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(state);
    const done = await explained(everything(), () =>
      api.waitFor(id, (e) => e.taskRuns.some((r) => finished(r.state)), 60_000),
    );
    expect(done.taskRuns).toEqual([
      expect.objectContaining({ state: 'SUCCEEDED', attempt: 1, ownerId: OWNER }),
    ]);
    expect(said(executor.output(), 'answers again; claiming docker task runs')).toBe(1);
    expect(said(executor.output(), 'does not answer; claiming no docker task runs')).toBe(1);
    expect((await fetch(ready)).status).toBe(200);
  }, 120_000);
});
