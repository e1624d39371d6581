import { SignJWT, jwtVerify, errors } from 'jose';
import { deriveKey } from './keys';

export type Role = 'member' | 'admin';
export interface UserClaims {
  user: string;
  workspace: string;
  role: Role;
}

const ISSUER = 'sluice';
const AUDIENCE = 'sluice-api';

export class AuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthError';
  }
}

/**
 * A workspace name: the same rule as namespace names (1–128 letters, digits,
 * '.', '_' or '-', starting with a letter or digit, no '..'). A token whose
 * workspace breaks it is refused, so an empty or odd workspace never reaches
 * a query. Null when fine, else why.
 */
export function workspaceNameProblem(name: string): string | null {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name) || name.includes('..')) {
    return `workspace "${name}" must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit`;
  }
  return null;
}

/** Lifetime of a user token when none is given. */
export const DEFAULT_USER_TOKEN_LIFETIME = '30d';

const LIFETIME_UNITS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;
/** The accepted `--expires` format, for help texts and error messages. */
export const LIFETIME_FORMAT = 'a whole number and a unit: s, m, h, d or w (e.g. 90m, 12h, 30d, 52w)';

/** `30d` → 2 592 000 (seconds); null when it is not LIFETIME_FORMAT or is zero. */
export function parseTokenLifetime(text: string): number | null {
  const match = /^([0-9]{1,9})([smhdw])$/.exec(text.trim());
  if (!match) return null;
  const seconds = Number(match[1]) * LIFETIME_UNITS[match[2] as keyof typeof LIFETIME_UNITS];
  return seconds > 0 ? seconds : null;
}

/** Every user token expires: `expiresIn` is LIFETIME_FORMAT, 30 days by default. */
export async function createUserToken(
  secret: string,
  claims: UserClaims,
  options: { expiresIn?: string } = {},
): Promise<string> {
  return new SignJWT({ workspace: claims.workspace, role: claims.role })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(claims.user)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? DEFAULT_USER_TOKEN_LIFETIME)
    .sign(deriveKey(secret, 'user'));
}

export async function verifyUserToken(secret: string, token: string): Promise<UserClaims> {
  try {
    const { payload } = await jwtVerify(token, deriveKey(secret, 'user'), {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['HS256'],
      // A token without exp would be valid forever; none that Sluice creates lacks one.
      requiredClaims: ['exp'],
    });
    const role = payload.role;
    if (typeof payload.sub !== 'string' || typeof payload.workspace !== 'string') {
      throw new AuthError('token lacks user or workspace');
    }
    if (role !== 'member' && role !== 'admin') throw new AuthError('token has no valid role');
    const badWorkspace = workspaceNameProblem(payload.workspace);
    if (badWorkspace) throw new AuthError(`token's ${badWorkspace}`);
    return { user: payload.sub, workspace: payload.workspace, role };
  } catch (err) {
    if (err instanceof AuthError) throw err;
    if (err instanceof errors.JWTExpired) throw new AuthError('token expired');
    if (err instanceof errors.JWTClaimValidationFailed && err.claim === 'exp') {
      throw new AuthError('token has no expiry (exp); create a new one with sluice token create');
    }
    throw new AuthError('invalid token');
  }
}
