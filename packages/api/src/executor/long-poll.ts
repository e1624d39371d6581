import type { Request, Response } from 'express';
import { WaitForWorkResponse } from '@sluice/protocol';
import { HttpError } from '../http-errors';

/** The longest wait-for-work the server holds open, whatever the executor asks. */
export const MAX_WAIT_FOR_WORK_MS = 30_000;

/** The `timeoutMs` query parameter, capped at MAX_WAIT_FOR_WORK_MS. */
export function waitTimeoutOf(req: Request): number {
  const raw = req.query.timeoutMs;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value)) {
    throw new HttpError(400, 'invalid_request', 'timeoutMs: expected a non-negative integer (milliseconds)');
  }
  return Math.min(value, MAX_WAIT_FOR_WORK_MS);
}

/**
 * Answers `{queued}` when `wait` resolves. A client that hung up meanwhile
 * gets nothing written and no error logged: the instance simply polls again.
 */
export async function answerLongPoll(res: Response, wait: Promise<boolean>): Promise<void> {
  const hungUp = new Promise<null>((resolve) => res.once('close', () => resolve(null)));
  const queued = await Promise.race([wait, hungUp]);
  if (queued === null || res.destroyed || res.headersSent) return;
  res.json(WaitForWorkResponse.parse({ queued }));
}
