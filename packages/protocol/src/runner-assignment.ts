import { z } from 'zod';

/**
 * A standby runner (`sluice exec --standby`) is started by the process
 * executor before any task run is claimed, with none of the three runner
 * variables in its environment. When a claim arrives, the executor writes ONE
 * line to the runner's stdin: this object as JSON. The run token thus never
 * enters the runner's environment (nor /proc/<pid>/environ, nor anything the
 * runner or a debugger would dump with it); it only crosses a private pipe.
 */
export const RunnerAssignment = z
  .object({
    /** Base URL of the runner API, as SLUICE_API_URL for a freshly started runner. */
    apiUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
    /** The task run's token for the runner API, as SLUICE_RUN_TOKEN. */
    runToken: z.string().min(1, 'must not be empty'),
    /** The task run to run, as SLUICE_TASK_RUN_ID. */
    taskRunId: z.string().min(1, 'must not be empty'),
  })
  .strict();
export type RunnerAssignment = z.infer<typeof RunnerAssignment>;

/** The argument of `sluice exec` that starts a standby runner. */
export const RUNNER_STANDBY_FLAG = '--standby';

/** Upper bound of the assignment line; a token is a few hundred bytes, so anything near this is not one. */
export const RUNNER_ASSIGNMENT_MAX_BYTES = 64 * 1024;

/** An assignment line that cannot be used. The message names fields, never their values (one is a token). */
export class RunnerAssignmentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunnerAssignmentError';
  }
}

/** The line the executor writes (with its newline), validated first so a runner never gets a bad one. */
export function encodeRunnerAssignment(assignment: RunnerAssignment): string {
  return `${JSON.stringify(check(assignment))}\n`;
}

/** Reads the line a standby runner received (without its newline). */
export function decodeRunnerAssignment(line: string): RunnerAssignment {
  if (Buffer.byteLength(line) > RUNNER_ASSIGNMENT_MAX_BYTES) {
    throw new RunnerAssignmentError(`the assignment is longer than ${RUNNER_ASSIGNMENT_MAX_BYTES} bytes`);
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new RunnerAssignmentError('the assignment is not JSON');
  }
  return check(value);
}

function check(value: unknown): RunnerAssignment {
  const parsed = RunnerAssignment.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) =>
    issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
  );
  throw new RunnerAssignmentError(`the assignment is invalid: ${problems.join('; ')}`);
}
