import type { Readable } from 'node:stream';
import { parseRunnerEnv, runnerEnvSchema, type RunnerEnv } from '@sluice/config';
import {
  decodeRunnerAssignment,
  RUNNER_ASSIGNMENT_MAX_BYTES,
  RUNNER_STANDBY_FLAG,
  RunnerAssignmentError,
} from '@sluice/protocol';
import { runTask } from './run-task';
import { openStdinChannel, stdinIsPipe } from './stdin-channel';
import { warmUp } from './warm-up';

export interface ExecIo {
  env: Record<string, string | undefined>;
  stderr: (text: string) => void;
  /** The arguments of `exec`; only `--standby` is read. Default: this process's own arguments. */
  args?: readonly string[];
  /** Where a standby reads its assignment and the executor's death is seen; default process.stdin. */
  stdin?: Readable;
}

/** The three run variables; a standby must have none of them. */
const RUN_VARIABLES = Object.keys(runnerEnvSchema.shape);

/**
 * `sluice exec`, shared by every binary that carries the runner (the runner
 * app and the server app, whose process executor starts itself as the
 * runner). Exit code: the task's own; 1 when the runner failed; 2 when its
 * three variables (or a standby's assignment) are missing or invalid; 0 for a
 * standby whose executor went away before it had work for it.
 */
export async function runExecCommand(io: ExecIo): Promise<number> {
  const args = io.args ?? process.argv.slice(2);
  if (args.includes(RUNNER_STANDBY_FLAG)) return runStandby(io);
  let env: RunnerEnv;
  try {
    env = parseRunnerEnv(io.env);
  } catch (error) {
    io.stderr(`sluice exec: ${(error as Error).message}\n`);
    return 2;
  }
  const parentGone = watchesStdin(io)
    ? openStdinChannel(io.stdin ?? process.stdin, RUNNER_ASSIGNMENT_MAX_BYTES).ended
    : undefined;
  return runAssigned(env, io, parentGone);
}

/**
 * `sluice exec --standby`: started by the process executor before there is a
 * task run for it, with its code loaded and warmed up, it waits for one line
 * on stdin naming its task run (RunnerAssignment), then runs it exactly like
 * a runner started with the three variables. Taking the run token from a
 * pipe rather than the environment keeps it out of /proc/<pid>/environ.
 */
async function runStandby(io: ExecIo): Promise<number> {
  const present = RUN_VARIABLES.filter((name) => io.env[name] !== undefined);
  if (present.length > 0) {
    io.stderr(
      `sluice exec ${RUNNER_STANDBY_FLAG}: ${present.join(', ')} must not be set; a standby takes its task run from stdin\n`,
    );
    return 2;
  }
  const channel = openStdinChannel(io.stdin ?? process.stdin, RUNNER_ASSIGNMENT_MAX_BYTES);
  // Not awaited: an assignment that arrives meanwhile is not kept waiting.
  void warmUp();
  const line = await channel.firstLine;
  // The executor stopped or died before it had work for this standby: nothing to report.
  if (line === null) return 0;
  let assignment: RunnerEnv;
  try {
    assignment = decodeRunnerAssignment(line);
  } catch (error) {
    if (!(error instanceof RunnerAssignmentError)) throw error;
    io.stderr(`sluice exec ${RUNNER_STANDBY_FLAG}: ${error.message}\n`);
    return 2;
  }
  return runAssigned(assignment, io, watchesStdin(io) ? channel.ended : undefined);
}

/** In a container or a terminal stdin is not a pipe, and its end means nothing. */
function watchesStdin(io: ExecIo): boolean {
  return io.stdin !== undefined || stdinIsPipe();
}

async function runAssigned(
  run: RunnerEnv,
  io: ExecIo,
  parentGone: Promise<void> | undefined,
): Promise<number> {
  try {
    const { exitCode } = await runTask({
      ...run,
      env: io.env,
      log: (message) => io.stderr(`sluice exec: ${message}\n`),
      parentGone,
    });
    return exitCode;
  } catch (error) {
    io.stderr(`sluice exec: ${(error as Error).message}\n`);
    return 1;
  }
}
