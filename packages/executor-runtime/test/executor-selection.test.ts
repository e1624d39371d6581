import { ConfigError } from '@sluice/config';
import { detectExecutors, resolveExecutorTypes, type DetectionProbes } from '../src/executor-selection';

/** A Docker pinger that answers as told and records how it was asked. */
function pinger(answer: 'yes' | 'no' | 'fails' | 'hangs') {
  const calls: number[] = [];
  const ping = (timeoutMs: number): Promise<boolean> => {
    calls.push(timeoutMs);
    if (answer === 'yes') return Promise.resolve(true);
    if (answer === 'no') return Promise.resolve(false);
    if (answer === 'fails') return Promise.reject(new Error('connect ENOENT /var/run/docker.sock'));
    return new Promise<boolean>(() => undefined);
  };
  return { ping, calls };
}

function probes(overrides: Partial<DetectionProbes> = {}): DetectionProbes {
  return { env: {}, pingDocker: pinger('no').ping, ...overrides };
}

describe('SLUICE_EXECUTORS=auto detection', () => {
  it('turns docker on for a docker-executor when the Docker API answers its ping within 2 s', async () => {
    const docker = pinger('yes');
    expect(await detectExecutors('docker-executor', probes({ pingDocker: docker.ping }))).toEqual([
      'inline',
      'docker',
    ]);
    expect(docker.calls).toEqual([2000]);
  });

  it.each(['no', 'fails'] as const)('leaves docker off when the ping answers %s', async (answer) => {
    const docker = pinger(answer);
    expect(await detectExecutors('docker-executor', probes({ pingDocker: docker.ping }))).toEqual(['inline']);
  });

  it('gives up on a Docker API that does not answer within 2 s', async () => {
    const docker = pinger('hangs');
    expect(await detectExecutors('docker-executor', probes({ pingDocker: docker.ping }))).toEqual(['inline']);
  });

  it('never detects the process executor on an executor app', async () => {
    const docker = pinger('yes');
    const types = await detectExecutors('docker-executor', probes({ pingDocker: docker.ping }));
    expect(types).not.toContain('process');
    expect(
      await detectExecutors('k8s-executor', probes({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' } })),
    ).not.toContain('process');
  });

  it('considers kubernetes only inside a pod, and there lets the Job dry run decide', async () => {
    const dryRuns: number[] = [];
    const dryRun = (answer: boolean) => (timeoutMs: number) => {
      dryRuns.push(timeoutMs);
      return Promise.resolve(answer);
    };
    expect(await detectExecutors('k8s-executor', probes({ kubernetesDryRun: dryRun(true) }))).toEqual([
      'inline',
    ]);
    expect(dryRuns).toEqual([]); // outside a pod nothing is tried
    const inPod = { KUBERNETES_SERVICE_HOST: '10.96.0.1' };
    expect(
      await detectExecutors('k8s-executor', probes({ env: inPod, kubernetesDryRun: dryRun(true) })),
    ).toEqual(['inline', 'kubernetes']);
    expect(
      await detectExecutors('k8s-executor', probes({ env: inPod, kubernetesDryRun: dryRun(false) })),
    ).toEqual(['inline']);
    expect(dryRuns).toEqual([5000, 5000]);
    // Until the kubernetes executor brings its dry run, being in a pod decides alone.
    expect(await detectExecutors('k8s-executor', probes({ env: inPod }))).toEqual(['inline', 'kubernetes']);
  });

  it('does not ping Docker for a k8s-executor', async () => {
    const docker = pinger('yes');
    await detectExecutors('k8s-executor', probes({ pingDocker: docker.ping }));
    expect(docker.calls).toEqual([]);
  });
});

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message;
}

describe('resolveExecutorTypes', () => {
  it('runs exactly an explicit list (inline included) without detecting anything', async () => {
    const docker = pinger('yes');
    expect(
      await resolveExecutorTypes(
        'docker-executor',
        ['inline', 'process'],
        probes({ pingDocker: docker.ping }),
      ),
    ).toEqual(['inline', 'process']);
    expect(docker.calls).toEqual([]);
    expect(await resolveExecutorTypes('k8s-executor', ['inline', 'process'], probes())).toEqual([
      'inline',
      'process',
    ]);
  });

  // issue 11: an explicit list does no detection; the engine watch holds the claims while docker is down.
  it('runs a listed docker executor without pinging, whether or not the Docker API answers', async () => {
    const docker = pinger('yes');
    expect(
      await resolveExecutorTypes(
        'docker-executor',
        ['inline', 'process', 'docker'],
        probes({ pingDocker: docker.ping }),
      ),
    ).toEqual(['inline', 'process', 'docker']);
    expect(docker.calls).toEqual([]);
    expect(await resolveExecutorTypes('docker-executor', ['inline', 'process', 'docker'], probes())).toEqual([
      'inline',
      'process',
      'docker',
    ]);
    expect(await resolveExecutorTypes('standalone', ['docker'], probes())).toEqual(['inline', 'docker']);
  });

  it('gives a standalone server process, and docker when the Docker API answers, with auto', async () => {
    expect(await resolveExecutorTypes('standalone', 'auto', probes())).toEqual(['inline', 'process']);
    expect(
      await resolveExecutorTypes('standalone', 'auto', probes({ pingDocker: pinger('yes').ping })),
    ).toEqual(['inline', 'process', 'docker']);
  });

  it('turns docker on with auto when the Docker API answers', async () => {
    expect(
      await resolveExecutorTypes('docker-executor', 'auto', probes({ pingDocker: pinger('yes').ping })),
    ).toEqual(['inline', 'docker']);
  });

  it('refuses auto when it finds no Docker, naming the ping', async () => {
    const message = await refusal(resolveExecutorTypes('docker-executor', 'auto', probes()));
    expect(message).toContain('no Docker API answered a ping within 2 s');
    expect(message).toContain('SLUICE_EXECUTORS=process');
  });

  it('runs kubernetes on a k8s-executor when listed or detected, and refuses auto outside a pod', async () => {
    expect(await resolveExecutorTypes('k8s-executor', ['inline', 'kubernetes'], probes())).toEqual([
      'inline',
      'kubernetes',
    ]);
    const inPod = probes({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' } });
    expect(await resolveExecutorTypes('k8s-executor', 'auto', inPod)).toEqual(['inline', 'kubernetes']);
    expect(await refusal(resolveExecutorTypes('k8s-executor', 'auto', probes()))).toContain(
      'KUBERNETES_SERVICE_HOST is unset',
    );
  });

  it('adds kubernetes to a standalone server in a pod when the Job dry run succeeds', async () => {
    const inPod = { KUBERNETES_SERVICE_HOST: '10.96.0.1' };
    expect(
      await resolveExecutorTypes(
        'standalone',
        'auto',
        probes({ env: inPod, kubernetesDryRun: async () => true }),
      ),
    ).toEqual(['inline', 'process', 'kubernetes']);
    expect(
      await resolveExecutorTypes(
        'standalone',
        'auto',
        probes({ env: inPod, kubernetesDryRun: async () => false }),
      ),
    ).toEqual(['inline', 'process']);
  });

  it("refuses the other app's executor", async () => {
    expect(
      await refusal(resolveExecutorTypes('docker-executor', ['inline', 'kubernetes'], probes())),
    ).toContain('kubernetes cannot run in sluice docker-executor');
    expect(await refusal(resolveExecutorTypes('k8s-executor', ['inline', 'docker'], probes()))).toContain(
      'docker cannot run in sluice k8s-executor',
    );
  });
});
