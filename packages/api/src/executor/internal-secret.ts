import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { INTERNAL_SECRET_HEADER } from '@sluice/protocol';
import { sendError } from '../http-errors';

export interface RefusalLog {
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** A refused executor keeps polling; one warning per this long is enough to show it. */
const WARN_EVERY_MS = 60_000;

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Requires X-Internal-Secret equal to PIPELINE_EXECUTOR_API_TOKEN. Both sides
 * are hashed first so the comparison takes the same time whatever the length
 * or content of the guess. While the server has no token every call is
 * refused. A refusal answers 401 before the body is read and does nothing
 * else; neither the answer nor the log contains what was sent.
 */
export function requireInternalSecret(apiToken: string | undefined, log: RefusalLog): RequestHandler {
  const expected = apiToken ? digest(apiToken) : null;
  let lastWarnAt = -Infinity;
  return (req, res, next) => {
    const given = req.header(INTERNAL_SECRET_HEADER);
    if (expected && given !== undefined && timingSafeEqual(digest(given), expected)) {
      next();
      return;
    }
    const reason = !expected
      ? 'the executor API is disabled on this server: PIPELINE_EXECUTOR_API_TOKEN is not set'
      : given === undefined
        ? 'missing X-Internal-Secret header'
        : 'wrong X-Internal-Secret';
    const now = Date.now();
    if (now - lastWarnAt >= WARN_EVERY_MS) {
      lastWarnAt = now;
      log.warn('executor API call refused', { reason, method: req.method, path: req.path, remote: req.ip });
    }
    sendError(res, 401, 'unauthorized', reason);
  };
}
