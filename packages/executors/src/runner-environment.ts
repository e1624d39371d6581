import type { ClaimedTaskRun } from '@sluice/protocol';

/**
 * Server variables a runner may inherit. Everything else — SLUICE_DATABASE_URL,
 * SLUICE_MASTER_KEYS, AUTH_JWT_SECRET, … — stays in the server: the runner
 * gets the task's environment (secrets included) from the runner API instead.
 * NODE_OPTIONS is deliberately absent: the runner is a Node single executable
 * application, which would honour it.
 */
export const RUNNER_ENV_ALLOWLIST = [
  'PATH',
  'HOME',
  'TZ',
  'LANG',
  'LC_ALL',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
] as const;

/** The environment of a `sluice exec` child: the allowlisted server variables plus the three runner variables. */
export function runnerEnvironment(
  serverEnv: NodeJS.ProcessEnv,
  run: Pick<ClaimedTaskRun, 'taskRunId' | 'runToken'>,
  runnerApiUrl: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of RUNNER_ENV_ALLOWLIST) {
    const value = serverEnv[name];
    if (value !== undefined) env[name] = value;
  }
  env.SLUICE_API_URL = runnerApiUrl;
  env.SLUICE_RUN_TOKEN = run.runToken;
  env.SLUICE_TASK_RUN_ID = run.taskRunId;
  return env;
}
