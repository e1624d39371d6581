import { RunTokenRejectedError, StaleFenceError } from '@sluice/protocol';

/**
 * True when the server says this task run is no longer ours: a stale fence (a
 * newer attempt or the watchdog took it) or a rejected run token (revoked when
 * the task run ended). Either way nothing we send counts any more.
 */
export function isOwnershipLost(error: unknown): boolean {
  return error instanceof StaleFenceError || error instanceof RunTokenRejectedError;
}
