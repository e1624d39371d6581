import { decodeJwt, SignJWT } from 'jose';
import { createUserToken, parseTokenLifetime, verifyUserToken } from '@sluice/auth';
import { deriveKey } from '../src/keys';

const SECRET = 'a-test-secret-of-enough-length';

/** A token exactly like Sluice's, except for the expiry. */
function signed(exp: number | null): Promise<string> {
  const jwt = new SignJWT({ workspace: 'w1', role: 'admin' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('sluice')
    .setAudience('sluice-api')
    .setSubject('ada')
    .setIssuedAt();
  if (exp !== null) jwt.setExpirationTime(exp);
  return jwt.sign(deriveKey(SECRET, 'user'));
}

test('a user token without exp is refused, saying so', async () => {
  await expect(verifyUserToken(SECRET, await signed(null))).rejects.toThrow(
    'token has no expiry (exp); create a new one with sluice token create',
  );
});

test('the same token with an exp in the future is accepted, one in the past is expired', async () => {
  const now = Math.floor(Date.now() / 1000);
  await expect(verifyUserToken(SECRET, await signed(now + 60))).resolves.toEqual({
    user: 'ada',
    workspace: 'w1',
    role: 'admin',
  });
  await expect(verifyUserToken(SECRET, await signed(now - 60))).rejects.toThrow('token expired');
});

test('createUserToken always sets exp, 30 days by default', async () => {
  const { iat, exp } = decodeJwt(
    await createUserToken(SECRET, { user: 'a', workspace: 'w', role: 'member' }),
  );
  expect(exp! - iat!).toBe(30 * 86_400);
  const short = decodeJwt(
    await createUserToken(SECRET, { user: 'a', workspace: 'w', role: 'member' }, { expiresIn: '90s' }),
  );
  expect(short.exp! - short.iat!).toBe(90);
});

test('parseTokenLifetime reads a whole number and a unit, nothing else', () => {
  expect(parseTokenLifetime('45s')).toBe(45);
  expect(parseTokenLifetime('90m')).toBe(5_400);
  expect(parseTokenLifetime('12h')).toBe(43_200);
  expect(parseTokenLifetime('30d')).toBe(2_592_000);
  expect(parseTokenLifetime('2w')).toBe(1_209_600);
  for (const bad of ['abc', '', '30', 'd', '0d', '-1d', '1.5h', '1 day', '30d ago', '1y', '9999999999d']) {
    expect({ bad, seconds: parseTokenLifetime(bad) }).toEqual({ bad, seconds: null });
  }
});

test('a token whose workspace breaks the name rule is refused (an empty one included)', async () => {
  for (const workspace of ['', 'a/b', '..', ' w']) {
    const token = await new SignJWT({ workspace, role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('sluice')
      .setAudience('sluice-api')
      .setSubject('ada')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(deriveKey(SECRET, 'user'));
    await expect(verifyUserToken(SECRET, token)).rejects.toThrow(/workspace/);
  }
});
