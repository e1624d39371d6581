import { RunnerTaskSpec } from '@sluice/protocol';
import { RunDirs } from './run-dirs';

/**
 * Variables a task inherits from the runner: what a shell needs, and the proxy
 * settings of the host. Nothing else of the runner's environment reaches the
 * task (on the process executor that would be the server's configuration).
 */
export const INHERITED_VARIABLES = [
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
