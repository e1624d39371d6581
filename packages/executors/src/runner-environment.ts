import { HOST_ENV_ALLOWLIST, type ClaimedTaskRun } from '@sluice/protocol';

/** Server variables a runner may inherit (one list for the runner and its task). */
export const RUNNER_ENV_ALLOWLIST = HOST_ENV_ALLOWLIST;

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
