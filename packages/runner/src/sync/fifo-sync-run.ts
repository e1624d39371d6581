import { SYNC_DIR_ENV, type SyncTaskPart } from '@sluice/protocol';
import type { SyncRole } from './endpoint';
import { FifoEndpointStarter } from './fifo-endpoint';

/**
 * On the docker executor (SLUICE_SYNC_DIR set by it), the sync's connectors
 * run in containers of their own, reached through the volume's FIFOs; their
 * commands are their wrappers' (the executor read them from the images), so
 * the orchestrator's `commands` only name the images, for its messages.
 * Null elsewhere: the connectors are child commands (process-endpoint.ts).
 */
export function fifoSyncEndpoints(
  task: SyncTaskPart,
  runnerEnv: Record<string, string | undefined>,
  options: { logLineMaxBytes: number; maskCut: (kept: string) => string },
): { starter: FifoEndpointStarter; commands: Record<SyncRole, [string, ...string[]]> } | null {
  const dir = runnerEnv[SYNC_DIR_ENV];
  if (!dir) return null;
  return {
    starter: new FifoEndpointStarter({ dir, ...options }),
    commands: {
      source: [task.source.image ?? 'source'],
      destination: [task.destination.image ?? 'destination'],
    },
  };
}
