import { z } from 'zod';
import type { EnvSchema } from './schemas';

/** Master keys are AES-256 keys: exactly this many bytes. */
export const MASTER_KEY_BYTES = 32;

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64_KEY = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Decodes one master key given as 64 hex characters or as base64 (standard or
 * URL-safe) of 32 bytes — `openssl rand -base64 32` prints one. Hex is tried
 * first: 64 hex characters are also valid base64 of the wrong length.
 */
export function decodeMasterKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (HEX_KEY.test(value)) return Buffer.from(value, 'hex');
  if (!BASE64_KEY.test(value)) return undefined;
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === MASTER_KEY_BYTES ? bytes : undefined;
}

const KEY_FORMAT = `a ${MASTER_KEY_BYTES}-byte key as base64 (openssl rand -base64 32) or 64 hex characters`;

/** One master key. */
export function masterKey(): EnvSchema<Buffer> {
  return z.string().transform((raw, ctx) => {
    const key = decodeMasterKey(raw);
    if (key) return key;
    ctx.addIssue({ code: 'custom', message: `expected ${KEY_FORMAT}` });
    return z.NEVER;
  });
}

/** A comma list of master keys: the first encrypts, all decrypt. */
export function masterKeyList(): EnvSchema<Buffer[]> {
  return z.string().transform((raw, ctx) => {
    const entries = raw
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0);
    const keys = entries.map(decodeMasterKey);
    const bad = keys.flatMap((key, index) => (key ? [] : [index + 1]));
    if (entries.length === 0 || bad.length > 0) {
      const where = bad.length > 0 ? `entr${bad.length === 1 ? 'y' : 'ies'} ${bad.join(', ')}: ` : '';
      ctx.addIssue({ code: 'custom', message: `${where}expected a comma list of ${KEY_FORMAT}` });
      return z.NEVER;
    }
    return keys.filter((key): key is Buffer => key !== undefined);
  });
}
