import type { Request, RequestHandler, Response } from 'express';
import { verifyUserToken, type UserClaims } from '@sluice/auth';
import { HttpError } from './http-errors';

function bearer(req: Request): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const [scheme, token] = header.split(' ');
  return scheme?.toLowerCase() === 'bearer' && token ? token : null;
}

export { bearer as bearerToken };

/** Requires a valid user JWT signed with AUTH_JWT_SECRET; `admin` routes also require the admin role. */
export function requireUser(secret: string, role: 'member' | 'admin' = 'member'): RequestHandler {
  return async (req, res, next) => {
    const token = bearer(req);
    if (!token) return next(new HttpError(401, 'unauthorized', 'missing bearer token'));
    let user: UserClaims;
    try {
      user = await verifyUserToken(secret, token);
    } catch (err) {
      return next(new HttpError(401, 'unauthorized', err instanceof Error ? err.message : 'invalid token'));
    }
    // Kept on res.locals: request-scoped, and typed through currentUser() below.
    res.locals.user = user;
    if (role === 'admin' && user.role !== 'admin') {
      return next(new HttpError(403, 'forbidden', 'this call needs the admin role'));
    }
    next();
  };
}

export function currentUser(res: Response): UserClaims {
  const user = res.locals.user as UserClaims | undefined;
  if (!user) throw new HttpError(401, 'unauthorized', 'not authenticated');
  return user;
}
