/** A wrong invocation: one line on stderr, exit code 2 (docs/cli.md#exit-codes). */
export class UsageError extends Error {}

/** A failure of a valid invocation (the server refused, the execution failed): exit code 1. */
export class CliError extends Error {}

/** A 4xx/5xx of the server, printed as its error code and message. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}
