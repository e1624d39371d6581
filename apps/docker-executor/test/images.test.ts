import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import {
  createTestDatabase,
  ended,
  eventually,
  EXECUTOR_TOKEN,
  explained,
  freePort,
  requireDocker,
  userApi,
  type TestDatabase,
} from '@sluice/testing';
import { useDockerTopology } from './docker-support';

// The engine's types through @sluice/testing (this app does not depend on dockerode).
type Docker = Awaited<ReturnType<typeof requireDocker>>;
type Container = ReturnType<Docker['getContainer']>;
type CreateOptions = Parameters<Docker['createContainer']>[0];

/**
 * The images docker/*.Dockerfile builds, as a user runs them. Building them
 * takes minutes, so these tests run only after
 *
 *   bash scripts/build-images.sh && SLUICE_IMAGES_BUILT=1 npx jest apps/docker-executor/test/images.test.ts
 *
 * (see docs/images.md). SLUICE_IMAGE_TAG picks the tag the script built (latest).
 */

const BUILT = process.env.SLUICE_IMAGES_BUILT === '1';
const TAG = process.env.SLUICE_IMAGE_TAG ?? 'latest';
const RUNNER_IMAGE = `sluice:${TAG}`;
const UV_IMAGE = `sluice-uv:${TAG}`;
const appImage = (app: string) => `sluice-${app}:${TAG}`;

const describeBuilt = BUILT ? describe : describe.skip;

describeBuilt('the runner images built by docker/runner.Dockerfile and docker/sluice-uv.Dockerfile', () => {
  const OWNER = `images-${randomBytes(3).toString('hex')}`;
  const topology = useDockerTopology(OWNER, {
    executorEnv: async () => ({ SLUICE_RUNNER_IMAGE: RUNNER_IMAGE }),
  });

  it('holds only the self-contained runner, runs as 65532 and has no shell', async () => {
    const docker = await requireDocker();
    const image = await docker.getImage(RUNNER_IMAGE).inspect();
    expect(image.Config.User).toBe('65532:65532');
    expect(image.Config.Entrypoint).toEqual([
      '/usr/local/bin/lib/ld-linux-x86-64.so.2',
      '--library-path',
      '/usr/local/bin/lib',
      '/usr/local/bin/sluice',
    ]);
    // FROM scratch: the runner and its lib/ are all there is, so `sh` cannot start.
    const shell = await runOnce(docker, {
      Image: RUNNER_IMAGE,
      Entrypoint: ['/bin/sh'],
      Cmd: ['-c', 'true'],
    });
    expect(shell.error ?? '').toMatch(/no such file|not found/i);
  });

  /** Runs one command task in `image` to its end: the task run, and its stdout lines. */
  async function runTask(image: string, command: string[], extra = '') {
    const { server, everything } = topology;
    const api = await userApi(server, 'admin');
    const name = `img-${randomBytes(3).toString('hex')}`;
    const flow = [
      'retry: { max_attempts: 1 }',
      'tasks:',
      '  - id: main',
      '    type: command',
      `    executor: { type: docker, image: "${image}"${extra} }`,
      `    command: ${JSON.stringify(command)}`,
      '',
    ].join('\n');
    expect((await api.putFlow('img', name, flow)).status).toBe(200);
    const id = await api.run('img', name);
    const execution = await explained(everything(), () => api.waitFor(id, ended, 90_000));
    expect(execution.state).toBe('SUCCEEDED');
    const [run] = execution.taskRuns;
    const logs = await api.logs(run!.id);
    return { run, stdout: logs.filter((l) => l.stream === 'stdout').map((l) => l.line) };
  }

  it.each([
    ['busybox-static (no libc)', () => topology.fx.busybox],
    ['glibc without libstdc++', () => topology.fx.glibc],
  ])(
    'injects the runner from it into %s and runs the task end to end',
    async (_, image) => {
      const { run, stdout } = await runTask(image(), [
        'sh',
        '-c',
        'echo "hello from $(uname -s)"; echo answer=42 >> "$SLUICE_OUTPUTS"',
      ]);
      expect(run).toMatchObject({ state: 'SUCCEEDED', ownerId: OWNER, outputs: { answer: '42' } });
      expect(stdout).toEqual(['hello from Linux']);
    },
    120_000,
  );

  // Python is Debian's 3.11 where sluice-uv was built WITH_UV=0 (no uv, no Python 3.12: see
  // docker/sluice-uv.Dockerfile); the test asserts a python 3, not which one.
  it.each([
    ['bash', ['bash', '-c', 'echo "bash ${BASH_VERSINFO[0]}"; echo lang=bash >> "$SLUICE_OUTPUTS"']],
    [
      'python',
      [
        'python',
        '-c',
        "import os, sys; print('python', sys.version_info[0]); open(os.environ['SLUICE_OUTPUTS'], 'a').write('lang=python\\n')",
      ],
    ],
    [
      'bun',
      [
        'bun',
        '-e',
        "console.log('bun', typeof Bun); require('fs').appendFileSync(process.env.SLUICE_OUTPUTS, 'lang=bun\\n')",
      ],
    ],
  ])(
    'runs a %s task in sluice-uv with inject_runner: false',
    async (lang, command) => {
      const { run, stdout } = await runTask(UV_IMAGE, command as string[], ', inject_runner: false');
      expect(run).toMatchObject({ state: 'SUCCEEDED', outputs: { lang } });
      expect(stdout).toEqual([{ bash: 'bash 5', python: 'python 3', bun: 'bun object' }[lang]]);
    },
    120_000,
  );
});

describeBuilt('the app images built by docker/<app>.Dockerfile', () => {
  let docker: Docker;
  let database: TestDatabase;
  const started: Container[] = [];

  beforeAll(async () => {
    docker = await requireDocker();
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(started.map((c) => c.remove({ force: true }).catch(() => undefined)));
    await database?.drop();
  });

  /** Starts `image` on the host network (its internal API on a free loopback port) with only `env`. */
  async function startImage(
    image: string,
    env: Record<string, string>,
    host: { Binds?: string[]; GroupAdd?: string[] } = {},
  ) {
    const internal = await freePort();
    const container = await docker.createContainer({
      Image: image,
      Env: Object.entries({ ...env, INTERNAL_HTTP_SERVER_ADDR: `127.0.0.1:${internal}` }).map(
        ([k, v]) => `${k}=${v}`,
      ),
      HostConfig: { NetworkMode: 'host', ReadonlyRootfs: true, Tmpfs: { '/tmp': '' }, ...host },
    });
    started.push(container);
    await container.start();
    return { container, url: `http://127.0.0.1:${internal}` };
  }

  /**
   * The executor each image is named for, with what it needs: docker with this
   * engine's socket (through the socket's group, as docker/compose.yaml does);
   * k8s-executor runs SLUICE_EXECUTORS=process, all it runs today (README).
   */
  function executorSetup(app: string): {
    env: Record<string, string>;
    host: { Binds?: string[]; GroupAdd?: string[] };
  } {
    const socket = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
    if (app !== 'docker-executor') return { env: { SLUICE_EXECUTORS: 'process' }, host: {} };
    return {
      env: { SLUICE_EXECUTORS: 'docker', DOCKER_HOST: 'unix:///var/run/docker.sock' },
      host: { Binds: [`${socket}:/var/run/docker.sock`], GroupAdd: [String(statSync(socket).gid)] },
    };
  }

  async function answersLive(container: Container, url: string): Promise<void> {
    await eventually(
      `${url}/live`,
      async () => {
        const state = (await container.inspect()).State;
        if (!state.Running)
          throw new Error(`the container exited (${state.ExitCode}): ${await logsOf(container)}`);
        return fetch(`${url}/live`).then(
          (r) => r.ok,
          () => false,
        );
      },
      60_000,
      250,
    );
  }

  it('server --standalone runs as uid 65532 with its embedded PostgreSQL in a volume', async () => {
    const http = await freePort();
    const volume = `sluice-images-test-${randomBytes(3).toString('hex')}`;
    const internal = await freePort();
    const container = await docker.createContainer({
      Image: appImage('server'),
      Cmd: ['server', '--standalone'],
      Env: [
        `HTTP_SERVER_ADDR=127.0.0.1:${http}`,
        `INTERNAL_HTTP_SERVER_ADDR=127.0.0.1:${internal}`,
        'SLUICE_EXECUTORS=inline',
      ],
      HostConfig: {
        NetworkMode: 'host',
        ReadonlyRootfs: true,
        Tmpfs: { '/tmp': '' },
        Binds: [`${volume}:/var/lib/sluice`],
      },
    });
    started.push(container);
    try {
      await container.start();
      const url = `http://127.0.0.1:${internal}`;
      await answersLive(container, url);
      // Ready once the embedded PostgreSQL is up and migrated.
      await eventually(
        '/ready',
        () =>
          fetch(`${url}/ready`).then(
            (r) => r.ok,
            () => false,
          ),
        60_000,
        250,
      );
      const top = (await container.top({ ps_args: '-o pid,uid,comm' })) as { Processes: string[][] };
      const uids = new Set(top.Processes.map((p) => p[1]));
      expect(top.Processes.map((p) => p[2])).toEqual(expect.arrayContaining(['node', 'postgres']));
      expect([...uids]).toEqual(['65532']);
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
      await docker
        .getVolume(volume)
        .remove()
        .catch(() => undefined);
    }
  }, 120_000);

  it('jobs answers /live with only its database URL', async () => {
    const { container, url } = await startImage(appImage('jobs'), { SLUICE_DATABASE_URL: database.url });
    await answersLive(container, url);
  }, 90_000);

  it.each([
    ['docker-executor', 'DOCKER_EXECUTOR_OWNER_ID'],
    ['k8s-executor', 'K8S_EXECUTOR_OWNER_ID'],
  ])(
    '%s exits naming %s without it, and answers /live with it',
    async (app, variable) => {
      const api = { EXECUTOR_API_URL: 'http://127.0.0.1:9', EXECUTOR_API_TOKEN: EXECUTOR_TOKEN };
      const refused = await runOnce(docker, {
        Image: appImage(app),
        Env: Object.entries(api).map(([k, v]) => `${k}=${v}`),
      });
      expect(refused.exitCode).not.toBe(0);
      expect(refused.output).toContain(variable);

      const setup = executorSetup(app);
      const { container, url } = await startImage(
        appImage(app),
        { ...api, ...setup.env, [variable]: `images-${app}` },
        setup.host,
      );
      await answersLive(container, url);
    },
    90_000,
  );
});

async function logsOf(container: Container): Promise<string> {
  const raw = await container.logs({ stdout: true, stderr: true });
  return demux(raw);
}

/** Strips the engine's 8-byte stream headers from a non-TTY container's logs. */
function demux(raw: Buffer): string {
  let out = '';
  for (let i = 0; i + 8 <= raw.length;) {
    const size = raw.readUInt32BE(i + 4);
    out += raw.subarray(i + 8, i + 8 + size).toString();
    i += 8 + size;
  }
  return out;
}

/** Runs a container to its end: its exit code and output, or the engine's error when it cannot start. */
async function runOnce(
  docker: Docker,
  options: CreateOptions,
): Promise<{ exitCode?: number; output: string; error?: string }> {
  const container = await docker.createContainer(options);
  try {
    await container.start();
  } catch (err) {
    await container.remove({ force: true }).catch(() => undefined);
    return { output: '', error: (err as Error).message };
  }
  const { StatusCode } = (await container.wait()) as { StatusCode: number };
  const output = await logsOf(container);
  await container.remove({ force: true }).catch(() => undefined);
  return { exitCode: StatusCode, output };
}
