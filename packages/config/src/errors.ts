/** One thing wrong with one variable (or a pair of them). */
export interface ConfigProblem {
  /** The variable at fault, e.g. `SLUICE_DATABASE_URL` or `DB_DSN`. */
  variable: string;
  /** What is wrong, e.g. `expected a whole number ≥ 0`. */
  message: string;
  /** What was received, already made safe: a quoted value, `(set, hidden)`, or absent when unset. */
  received?: string;
}

/**
 * Thrown by `parseEnv` with every problem found, not only the first, so one
 * restart fixes them all. Secret values are never part of the message.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(
    readonly app: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    super(formatProblems(app, problems));
  }

  /** A ConfigError for one variable that a later check (e.g. executor detection) finds missing. */
  static missing(app: string, variable: string, why: string): ConfigError {
    return new ConfigError(app, [{ variable, message: `is required: ${why}` }]);
  }
}

function formatProblems(app: string, problems: readonly ConfigProblem[]): string {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  const lines = problems.map(
    (problem) =>
      `  - ${problem.variable}: ${problem.message}${problem.received ? `, received ${problem.received}` : ''}`,
  );
  return [`invalid configuration for sluice ${app} (${count}):`, ...lines].join('\n');
}
