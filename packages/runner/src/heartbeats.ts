import { RunnerClient } from '@sluice/protocol';
import { isOwnershipLost } from './ownership';

export interface HeartbeatOptions {
  client: RunnerClient;
  intervalMs: number;
  /** The answer asked for a cancel; called on every such answer. */
  onCancel: () => void;
  /** Stale fence or revoked token: this task run is no longer ours. Heartbeats stop. */
  onOwnershipLost: (error: Error) => void;
  log: (message: string) => void;
}

export interface Heartbeats {
  stop(): void;
}

/**
 * Heartbeats the task run every `intervalMs` (measured from the end of the
 * previous one, so they never overlap) until stopped. A failed heartbeat is
 * logged and the next one is tried; the watchdog decides when silence means lost.
 */
export function startHeartbeats(options: HeartbeatOptions): Heartbeats {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | null = null;

  const beat = async (): Promise<void> => {
    timer = null;
    try {
      const answer = await options.client.heartbeat({ signal: abort.signal });
      if (answer.cancel && !abort.signal.aborted) options.onCancel();
    } catch (error) {
      if (abort.signal.aborted) return;
      if (isOwnershipLost(error)) {
        abort.abort();
        options.onOwnershipLost(error as Error);
        return;
      }
      options.log(`heartbeat failed: ${(error as Error).message}`);
    }
    if (!abort.signal.aborted) timer = setTimeout(() => void beat(), options.intervalMs);
  };

  timer = setTimeout(() => void beat(), options.intervalMs);
  return {
    stop() {
      abort.abort();
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
