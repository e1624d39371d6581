import { ConfigError, parseEnv, type PasswdEntry, type TaskUserHost } from '../src';

const PASSWD: PasswdEntry[] = [
  { name: 'root', uid: 0, gid: 0 },
  { name: 'nobody', uid: 65534, gid: 65534 },
  { name: 'build', uid: 1000, gid: 1001 },
];

function host(uid: number): TaskUserHost {
  return {
    uid,
    lookup: (key) => PASSWD.find((e) => (typeof key === 'number' ? e.uid === key : e.name === key)) ?? null,
  };
}

const EXECUTOR = { EXECUTOR_API_URL: 'http://sluice-internal:8081', EXECUTOR_API_TOKEN: 't' };

function taskUserOf(env: Record<string, string>, uid: number) {
  return parseEnv('server', env, { standalone: true, taskUserHost: host(uid) }).instance.processTaskUser;
}

function problemOf(env: Record<string, string>, uid: number): string {
  try {
    taskUserOf(env, uid);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('SLUICE_PROCESS_TASK_USER', () => {
  it('runs process tasks of a root server as nobody by default', () => {
    expect(taskUserOf({}, 0)).toEqual({ uid: 65534, gid: 65534, name: 'nobody' });
  });

  it('takes a name or uid[:gid]; a uid alone takes its passwd group', () => {
    expect(taskUserOf({ SLUICE_PROCESS_TASK_USER: 'build' }, 0)).toEqual({
      uid: 1000,
      gid: 1001,
      name: 'build',
    });
    expect(taskUserOf({ SLUICE_PROCESS_TASK_USER: '1000' }, 0)).toEqual({
      uid: 1000,
      gid: 1001,
      name: 'build',
    });
    expect(taskUserOf({ SLUICE_PROCESS_TASK_USER: '4242:4243' }, 0)).toEqual({
      uid: 4242,
      gid: 4243,
      name: 'uid 4242',
    });
  });

  it('keeps tasks as root when it names root', () => {
    expect(taskUserOf({ SLUICE_PROCESS_TASK_USER: 'root' }, 0)).toBeNull();
  });

  it('stops the start naming the variable when the user does not exist', () => {
    const message = problemOf({ SLUICE_PROCESS_TASK_USER: 'no-such-user' }, 0);
    expect(message).toContain('SLUICE_PROCESS_TASK_USER: no user "no-such-user" on this host');
    expect(problemOf({ SLUICE_PROCESS_TASK_USER: '4242' }, 0)).toContain('give it as uid:gid');
    expect(problemOf({ SLUICE_PROCESS_TASK_USER: 'a b' }, 0)).toContain('expected a user name');
  });

  it('names the default when the host has no nobody', () => {
    const bare: TaskUserHost = { uid: 0, lookup: () => null };
    expect(() => parseEnv('server', {}, { standalone: true, taskUserHost: bare })).toThrow(
      'SLUICE_PROCESS_TASK_USER (default nobody): no user "nobody"',
    );
  });

  it('on a server that is not root: unset means its own user, another user is refused', () => {
    expect(taskUserOf({}, 1000)).toBeNull();
    expect(taskUserOf({ SLUICE_PROCESS_TASK_USER: 'build' }, 1000)).toBeNull();
    expect(problemOf({ SLUICE_PROCESS_TASK_USER: 'nobody' }, 1000)).toContain('not root');
  });

  it('is read by every instance app', () => {
    const env = { ...EXECUTOR, SLUICE_PROCESS_TASK_USER: 'build' };
    const options = { taskUserHost: host(0) };
    expect(
      parseEnv('docker-executor', { ...env, DOCKER_EXECUTOR_OWNER_ID: 'a' }, options).instance
        .processTaskUser,
    ).toMatchObject({ uid: 1000 });
    expect(
      parseEnv('k8s-executor', { ...env, K8S_EXECUTOR_OWNER_ID: 'k' }, options).instance.processTaskUser,
    ).toMatchObject({ uid: 1000 });
  });
});
