import type { LogStream, RunnerClient, RunnerTaskSpec, SyncTaskPart } from '@sluice/protocol';
import type { RunDirs } from '../run-dirs';
import { ProcessEndpointStarter } from './process-endpoint';
import { fifoSyncEndpoints } from './fifo-sync-run';
import { SyncOrchestrator, type SyncProgress } from './orchestrator';
import type { SyncRole } from './endpoint';

type MetricInput = Parameters<RunnerClient['sendMetrics']>[0][number];

/** How often a running sync reports its counts as metrics. */
export const SYNC_PROGRESS_INTERVAL_MS = 5_000;

export interface SyncTaskDeps {
  spec: RunnerTaskSpec;
  task: SyncTaskPart;
  dirs: RunDirs;
  env: Record<string, string>;
  /** The runner's environment: AIRBYTE_ENTRYPOINT of an image. */
  runnerEnv: Record<string, string | undefined>;
  log: (stream: LogStream, line: string) => void;
  mask: (text: string) => string;
  maskCut: (kept: string) => string;
  commit: (request: Parameters<RunnerClient['commitState']>[0]) => Promise<unknown>;
  sendMetrics: (metrics: MetricInput[]) => void;
  onStarted: () => void;
}

/**
 * The sync orchestrator on the process executor: both connectors are child
 * commands of the runner (ProcessEndpointStarter), their files in the run dir.
 * Null when a connector has no command to run (an image without
 * AIRBYTE_ENTRYPOINT here): that is `invalid_task`.
 */
export function createSyncRun(deps: SyncTaskDeps): SyncOrchestrator | { invalid: string } {
  const fifo = fifoSyncEndpoints(deps.task, deps.runnerEnv, {
    logLineMaxBytes: deps.spec.limits.logLineMaxBytes,
    maskCut: deps.maskCut,
  });
  const commands: Partial<Record<SyncRole, [string, ...string[]]>> = fifo?.commands ?? {};
  for (const role of fifo ? [] : (['source', 'destination'] as const)) {
    const endpoint = deps.task[role];
    const entrypoint = deps.runnerEnv.AIRBYTE_ENTRYPOINT?.trim().split(/\s+/).filter(Boolean);
    const command = endpoint.command ?? (endpoint.image && entrypoint?.length ? entrypoint : undefined);
    const [file, ...args] = command ?? [];
    if (!file) {
      return {
        invalid: `the sync's ${role} has no command, and its image sets no AIRBYTE_ENTRYPOINT here (image ${endpoint.image ?? ''})`,
      };
    }
    commands[role] = [file, ...args];
  }
  const starter =
    fifo?.starter ??
    new ProcessEndpointStarter({
      filesDir: deps.dirs.root,
      cwd: deps.dirs.work,
      env: deps.env,
      logLineMaxBytes: deps.spec.limits.logLineMaxBytes,
      maskCut: deps.maskCut,
    });
  return new SyncOrchestrator({
    task: deps.task,
    commands: commands as Record<SyncRole, [string, ...string[]]>,
    starter,
    commit: deps.commit,
    log: deps.log,
    mask: deps.mask,
    logLineMaxBytes: deps.spec.limits.logLineMaxBytes,
    progress: (p) => deps.sendMetrics(progressMetrics(p)),
    progressIntervalMs: SYNC_PROGRESS_INTERVAL_MS,
    stopGraceMs: deps.spec.cancelGraceMs,
    onStarted: (describe) => {
      deps.log('system', `sync connectors started (${describe})`);
      deps.onStarted();
    },
  });
}

/** Records and bytes emitted vs committed so far, as the task's metrics (docs/connectors.md#sync). */
export function progressMetrics(p: SyncProgress): MetricInput[] {
  const sum = (counts: SyncProgress['emitted'], field: 'records' | 'bytes') =>
    Object.values(counts).reduce((n, c) => n + c[field], 0);
  return [
    { name: 'sync_records_emitted', value: sum(p.emitted, 'records') },
    { name: 'sync_bytes_emitted', value: sum(p.emitted, 'bytes') },
    { name: 'sync_records_committed', value: sum(p.committed, 'records') },
    { name: 'sync_bytes_committed', value: sum(p.committed, 'bytes') },
    { name: 'sync_states_committed', value: p.commits },
  ];
}
