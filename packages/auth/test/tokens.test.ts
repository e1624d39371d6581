import { createRunToken, createUserToken, verifyRunToken, verifyUserToken } from '@sluice/auth';

const SECRET = 'a-test-secret-of-enough-length';

describe('user tokens', () => {
  it('round-trip user, workspace and role', async () => {
    const token = await createUserToken(SECRET, { user: 'ada', workspace: 'w1', role: 'admin' });
    await expect(verifyUserToken(SECRET, token)).resolves.toEqual({
      user: 'ada',
      workspace: 'w1',
      role: 'admin',
    });
  });

  it('reject another secret and a run token', async () => {
    const token = await createUserToken(SECRET, { user: 'ada', workspace: 'w1', role: 'member' });
    await expect(verifyUserToken('another-secret-of-enough-length', token)).rejects.toThrow('invalid token');
    const runToken = await createRunToken(SECRET, { taskRunId: 'tr1', fence: 1 }, 1000);
    await expect(verifyUserToken(SECRET, runToken)).rejects.toThrow('invalid token');
  });
});

describe('run tokens', () => {
  it('carry the task run and fence', async () => {
    const token = await createRunToken(SECRET, { taskRunId: 'tr1', fence: 3 }, 60_000);
    await expect(verifyRunToken(SECRET, token)).resolves.toEqual({ taskRunId: 'tr1', fence: 3 });
  });

  it('expire at the task timeout plus ten minutes', async () => {
    const past = new Date(Date.now() - 11 * 60 * 1000 - 1000);
    const expired = await createRunToken(SECRET, { taskRunId: 'tr1', fence: 1 }, 1000, past);
    await expect(verifyRunToken(SECRET, expired)).rejects.toThrow('run token expired');
    const live = await createRunToken(SECRET, { taskRunId: 'tr1', fence: 1 }, 5 * 60 * 1000, past);
    await expect(verifyRunToken(SECRET, live)).resolves.toEqual({ taskRunId: 'tr1', fence: 1 });
  });

  it('cannot be used as a user token', async () => {
    const user = await createUserToken(SECRET, { user: 'ada', workspace: 'w1', role: 'admin' });
    await expect(verifyRunToken(SECRET, user)).rejects.toThrow('invalid run token');
  });
});
