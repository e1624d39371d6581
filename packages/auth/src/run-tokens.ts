import { SignJWT, jwtVerify, errors } from 'jose';
import { deriveKey } from './keys';
import { AuthError } from './user-tokens';

/** What a run token proves: the bearer is the runner of this task run, at this claim (fence). */
export interface RunTokenClaims {
  taskRunId: string;
  fence: number;
}

const ISSUER = 'sluice';
const AUDIENCE = 'sluice-runner';
/** A run token outlives its task's timeout by this much, so the runner can still report after a timeout. */
export const RUN_TOKEN_SLACK_MS = 10 * 60 * 1000;

export async function createRunToken(
  secret: string,
  claims: RunTokenClaims,
  taskTimeoutMs: number,
  now: Date = new Date(),
): Promise<string> {
  const exp = Math.ceil((now.getTime() + taskTimeoutMs + RUN_TOKEN_SLACK_MS) / 1000);
  return new SignJWT({ fence: claims.fence })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(claims.taskRunId)
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setExpirationTime(exp)
    .sign(deriveKey(secret, 'run'));
}

/**
 * Checks the signature and expiry only. Revocation (the task run has ended,
 * or a newer claim holds it) is the server's check against the database.
 */
export async function verifyRunToken(secret: string, token: string): Promise<RunTokenClaims> {
  try {
    const { payload } = await jwtVerify(token, deriveKey(secret, 'run'), {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['HS256'],
    });
    if (typeof payload.sub !== 'string' || typeof payload.fence !== 'number') {
      throw new AuthError('run token lacks task run or fence');
    }
    return { taskRunId: payload.sub, fence: payload.fence };
  } catch (err) {
    if (err instanceof AuthError) throw err;
    if (err instanceof errors.JWTExpired) throw new AuthError('run token expired');
    throw new AuthError('invalid run token');
  }
}
