import { createHmac } from 'node:crypto';

/**
 * User tokens and run tokens are signed with different keys derived from
 * AUTH_JWT_SECRET, so one kind can never be replayed as the other even if a
 * claim check were missed.
 */
export function deriveKey(secret: string, purpose: 'user' | 'run'): Uint8Array {
  if (secret.length < 16) throw new Error('AUTH_JWT_SECRET must be at least 16 characters');
  return new Uint8Array(createHmac('sha256', secret).update(`sluice:${purpose}-token:v1`).digest());
}
