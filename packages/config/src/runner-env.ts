import { z } from 'zod';
import { ConfigError, ConfigProblem } from './errors';

/**
 * The environment of `sluice exec`. An executor gives the runner exactly these
 * three variables; everything else (the task, its environment and secrets)
 * comes from the runner API.
 */
export const runnerEnvSchema = z.object({
  /** Base URL of a server's internal API, e.g. http://sluice-server:8081 */
  SLUICE_API_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  /** Per-task-run JWT for the runner API. */
  SLUICE_RUN_TOKEN: z.string().min(1, 'must not be empty'),
  SLUICE_TASK_RUN_ID: z.string().min(1, 'must not be empty'),
});

export interface RunnerEnv {
  apiUrl: string;
  runToken: string;
  taskRunId: string;
}

/**
 * Reads the runner's variables. Throws a ConfigError naming every missing or
 * invalid variable; values are never echoed (one of them is a token).
 */
export function parseRunnerEnv(env: Record<string, string | undefined>): RunnerEnv {
  const parsed = runnerEnvSchema.safeParse({
    SLUICE_API_URL: env.SLUICE_API_URL,
    SLUICE_RUN_TOKEN: env.SLUICE_RUN_TOKEN,
    SLUICE_TASK_RUN_ID: env.SLUICE_TASK_RUN_ID,
  });
  if (!parsed.success) {
    const problems: ConfigProblem[] = parsed.error.issues.map((issue) => {
      const variable = String(issue.path[0] ?? 'environment');
      return { variable, message: env[variable] === undefined ? 'is required' : issue.message };
    });
    throw new ConfigError('exec', problems);
  }
  return {
    apiUrl: parsed.data.SLUICE_API_URL,
    runToken: parsed.data.SLUICE_RUN_TOKEN,
    taskRunId: parsed.data.SLUICE_TASK_RUN_ID,
  };
}
