import { ConfigError, parseEnv } from '@sluice/config';
import type { ClaimRequest, ClaimedTaskRun, ExecutorProtocol, InstanceRegistration } from '@sluice/protocol';
import { buildInstance, type BuiltInstance } from '../src/build-instance';

/** The executor protocol as the builder sees it: registrations and claims are recorded, nothing is queued. */
function recordingProtocol() {
  const registrations: InstanceRegistration[] = [];
  const claims: ClaimRequest[] = [];
  const protocol: ExecutorProtocol = {
    register: async (r) => void registrations.push(r),
    claim: async (r): Promise<ClaimedTaskRun[]> => (claims.push(r), []),
    markStarted: async () => undefined,
    heartbeat: async () => ({ cancel: false }),
    reportLogs: async () => undefined,
    complete: async () => ({ applied: true, state: 'SUCCEEDED' }),
    isStillRunning: async () => false,
    cancelRequested: async () => [],
    startSubflow: async () => ({ executionId: 'none' }),
    waitForWork: (ms) => new Promise((resolve) => setTimeout(() => resolve(false), Math.min(ms, 50))),
  };
  return { protocol, registrations, claims };
}

function recordingLog() {
  const lines: Array<{ level: string; message: string }> = [];
  const at = (level: string) => (message: string) => void lines.push({ level, message });
  return {
    lines,
    log: { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') },
  };
}

const eventually = async (what: string, check: () => boolean, ms = 5_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

const EXECUTOR_ENV = { EXECUTOR_API_URL: 'http://127.0.0.1:9', EXECUTOR_API_TOKEN: 't' };
const built: BuiltInstance[] = [];
afterEach(async () => {
  await Promise.all(built.splice(0).map((b) => b.stop()));
});

describe('buildInstance', () => {
  it('turns a listed docker executor on while the Docker API is down: registers under the owner ID, claims nothing for docker and is not ready, then claims it once the engine answers', async () => {
    const config = parseEnv(
      'server',
      {
        HOSTNAME: 'the-host',
        SLUICE_EXECUTORS: 'process,docker',
        DOCKER_EXECUTOR_OWNER_ID: 'owner-a',
        SLUICE_QUEUE_POLL_INTERVAL: '20ms',
      },
      { standalone: true },
    );
    const { protocol, registrations, claims } = recordingProtocol();
    const { log, lines } = recordingLog();
    let answers = false;
    const pings: number[] = [];
    const instance = await buildInstance('standalone', config, {
      protocol,
      version: 'test',
      runnerCommand: ['true'],
      // No engine at this address: only the injected ping decides, and docker is never asked for work.
      env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
      log,
      probes: {
        pingDocker: async (timeoutMs) => {
          pings.push(timeoutMs);
          return answers;
        },
      },
      engineCheckIntervalMs: 30,
      relayQueuedWork: false,
    });
    built.push(instance);
    expect(instance.executorTypes).toEqual(['inline', 'process', 'docker']);
    expect(pings).toEqual([]); // a listed executor is not detected
    expect(instance.instanceId).toBe('owner-a');

    await instance.start();
    expect(registrations[0]).toMatchObject({
      instanceId: 'owner-a',
      executors: ['inline', 'process', 'docker'],
    });
    await eventually('a few claims', () => claims.length >= 6);
    expect(claims.every((c) => !c.executorTypes.includes('docker'))).toBe(true);
    expect(claims.some((c) => c.executorTypes.includes('process'))).toBe(true);
    expect(instance.ready()).toEqual({ ok: false, detail: 'docker: the Docker API does not answer' });
    await new Promise((resolve) => setTimeout(resolve, 100)); // several engine checks
    const said = (text: string) => lines.filter((l) => l.message.includes(text)).length;
    expect(said('does not answer; claiming no docker task runs')).toBe(1);

    answers = true;
    await eventually('a docker claim', () => claims.some((c) => c.executorTypes.includes('docker')));
    expect(instance.ready()).toEqual({ ok: true });
    expect(said('answers again; claiming docker task runs')).toBe(1);
    expect(said('does not answer; claiming no docker task runs')).toBe(1);
  });

  it('registers a process-only docker-executor under SLUICE_INSTANCE_ID, which needs no owner ID', async () => {
    const { protocol, registrations } = recordingProtocol();
    const config = parseEnv('docker-executor', {
      ...EXECUTOR_ENV,
      SLUICE_EXECUTORS: 'process',
      HOSTNAME: 'h-1',
    });
    const instance = await buildInstance('docker-executor', config, {
      protocol,
      version: 'test',
      runnerCommand: ['true'],
      env: {},
      log: recordingLog().log,
      relayQueuedWork: false,
    });
    built.push(instance);
    expect(instance.instanceId).toBe('h-1');
    await instance.start();
    expect(registrations[0]).toMatchObject({
      instanceId: 'h-1',
      type: 'docker-executor',
      capacity: { process: 5 },
    });
  });

  it.each([
    ['a standalone server listing docker', 'standalone', { SLUICE_EXECUTORS: 'docker' }],
    ['a docker-executor listing docker', 'docker-executor', { ...EXECUTOR_ENV, SLUICE_EXECUTORS: 'docker' }],
    ['a docker-executor with auto', 'docker-executor', { ...EXECUTOR_ENV }],
  ] as const)('refuses %s without DOCKER_EXECUTOR_OWNER_ID before asking Docker', async (_, layout, env) => {
    const pings: number[] = [];
    const deps = {
      protocol: recordingProtocol().protocol,
      version: 'test',
      runnerCommand: ['true'],
      env: {},
      log: recordingLog().log,
      probes: { pingDocker: async (ms: number) => (pings.push(ms), true) },
    };
    const attempt =
      layout === 'standalone'
        ? buildInstance('standalone', parseEnv('server', env, { standalone: true }), deps)
        : buildInstance('docker-executor', parseEnv('docker-executor', env), deps);
    const error = await attempt.then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.variable)).toEqual(['DOCKER_EXECUTOR_OWNER_ID']);
    expect(pings).toEqual([]);
  });

  it('starts a standalone server with auto and no Docker without an owner ID, under SLUICE_INSTANCE_ID', async () => {
    const { protocol } = recordingProtocol();
    const config = parseEnv('server', { SLUICE_INSTANCE_ID: 'solo' }, { standalone: true });
    const instance = await buildInstance('standalone', config, {
      protocol,
      version: 'test',
      runnerCommand: ['true'],
      env: {},
      log: recordingLog().log,
      probes: { pingDocker: async () => false },
    });
    built.push(instance);
    expect(instance.executorTypes).toEqual(['inline', 'process']);
    expect(instance.instanceId).toBe('solo');
  });
});
