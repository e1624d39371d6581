import { HOST_ENV_ALLOWLIST, RunnerTaskSpec } from '@sluice/protocol';
import { RunDirs } from './run-dirs';

/** Variables a task inherits from the runner: the host allowlist shared with the process executor. */
export const INHERITED_VARIABLES = HOST_ENV_ALLOWLIST;

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The task's environment: inherited variables, then the task's resolved
 * environment (which may override them), then the runner's own SLUICE_*
 * variables, which the task cannot override. The run token and the API URL are
 * deliberately absent: the task never talks to the runner API.
 */
export function buildChildEnv(
  runnerEnv: Record<string, string | undefined>,
  spec: RunnerTaskSpec,
  dirs: RunDirs,
): Record<string, string> {
  const env: Record<string, string> = { PATH: DEFAULT_PATH };
  for (const name of INHERITED_VARIABLES) {
    const value = runnerEnv[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, spec.env, {
    SLUICE_OUTPUTS: dirs.outputsFile,
    SLUICE_ARTIFACTS: dirs.artifactsDir,
    SLUICE_METRICS: dirs.metricsFile,
    SLUICE_WORK_DIR: dirs.work,
    SLUICE_TASK_RUN_ID: spec.taskRunId,
    SLUICE_EXECUTION_ID: spec.executionId,
    SLUICE_ATTEMPT: String(spec.attempt),
  });
  return env;
}
