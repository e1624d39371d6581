import { RunnerClient } from '@sluice/protocol';
import { TaskRun } from './task-run';

export interface RunTaskOptions {
  apiUrl: string;
  runToken: string;
  taskRunId: string;
  /** Parent of the per-run directory; the OS temp dir by default. */
  workRoot?: string;
  /** Runner diagnostics; stderr by default. Never given env values or task output. */
  log?: (message: string) => void;
  /** A client to use instead of one built from apiUrl/runToken/taskRunId (tests, custom retry). */
  client?: RunnerClient;
  /** Where inherited variables (PATH, HOME, proxies, …) come from; process.env by default. */
  env?: Record<string, string | undefined>;
  /** Treat SIGTERM/SIGINT of this process as a cancel of the task; true by default. */
  handleSignals?: boolean;
  /** How long the last log lines may take to deliver after the task ended; 2 minutes by default. */
  finalFlushTimeoutMs?: number;
  /** Log lines queued before the task's output is paused; 50 000 by default. */
  maxQueuedLogLines?: number;
  /**
   * Settles when the process that started this runner is gone (the process
   * executor holds our stdin open; EOF means it died). The task is then
   * stopped and no result is posted: the watchdog fails the task run `lost`,
   * as docs/task-run-lifecycle.md#12-shutdown-restart-adoption-and-owner-id-cleanup says.
   */
  parentGone?: Promise<void>;
}

export interface RunTaskResult {
  /** The task's exit code; 128+signal when it was killed; 1 when it did not run or the result was not accepted. */
  exitCode: number;
}

/**
 * `sluice exec`: runs one task run end to end. Rejects only when the spec
 * cannot be fetched (e.g. RunTokenRejectedError); every later failure is
 * reported to the server as the result and reflected in the exit code.
 */
export async function runTask(options: RunTaskOptions): Promise<RunTaskResult> {
  const log = options.log ?? ((message: string) => process.stderr.write(`sluice exec: ${message}\n`));
  const client =
    options.client ??
    new RunnerClient({ apiUrl: options.apiUrl, runToken: options.runToken, taskRunId: options.taskRunId });
  const spec = await client.getSpec();
  if (spec.taskRunId !== options.taskRunId) {
    throw new Error(`the spec is for task run ${spec.taskRunId}, not ${options.taskRunId}`);
  }
  const run = new TaskRun(spec, client, {
    workRoot: options.workRoot,
    env: options.env ?? process.env,
    log,
    handleSignals: options.handleSignals ?? true,
    finalFlushTimeoutMs: options.finalFlushTimeoutMs ?? 120_000,
    maxQueuedLogLines: options.maxQueuedLogLines,
    parentGone: options.parentGone,
  });
  return { exitCode: await run.run() };
}
