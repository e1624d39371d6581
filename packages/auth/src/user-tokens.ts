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
    .setExpirationTime(options.expiresIn ?? '30d')
    .sign(deriveKey(secret, 'user'));
}

export async function verifyUserToken(secret: string, token: string): Promise<UserClaims> {
  try {
    const { payload } = await jwtVerify(token, deriveKey(secret, 'user'), {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['HS256'],
    });
    const role = payload.role;
    if (typeof payload.sub !== 'string' || typeof payload.workspace !== 'string') {
      throw new AuthError('token lacks user or workspace');
    }
    if (role !== 'member' && role !== 'admin') throw new AuthError('token has no valid role');
    return { user: payload.sub, workspace: payload.workspace, role };
  } catch (err) {
    if (err instanceof AuthError) throw err;
    if (err instanceof errors.JWTExpired) throw new AuthError('token expired');
    throw new AuthError('invalid token');
  }
}
