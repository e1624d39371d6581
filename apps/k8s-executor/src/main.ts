// `exec` starts once per task run on the process executor: app-main imports
// nothing at load, and each command loads only what it uses.
import {
  executorAppMain,
  runExecutorAppFromCommandLine,
  type MainIo,
} from '@sluice/executor-runtime/app-main';

export type { MainIo };

const USAGE = `Usage: sluice k8s-executor [--help]
       sluice k8s-executor exec      (the runner; the process executor starts it)

Runs an instance with the kubernetes executor (and inline): one Job per task
run in K8S_EXECUTOR_NAMESPACE. It never opens the database: it claims task
runs and reports through a server's internal API (EXECUTOR_API_URL), and
serves /live, /ready and /metrics on INTERNAL_HTTP_SERVER_ADDR. It does not
start without K8S_EXECUTOR_OWNER_ID or K8S_EXECUTOR_OWNER_ID_PREFIX.
SLUICE_EXECUTORS=process runs a process instance outside a cluster.

Environment:
`;

/**
 * `sluice k8s-executor` (argv[0] is the command name) and `exec`, which the
 * process executor runs as `<node> <this file> exec`. Resolves with the exit code.
 */
export const main = executorAppMain({
  app: 'k8s-executor',
  usage: USAGE,
  mainFile: __filename,
  version: process.env.SLUICE_VERSION ?? '0.1.0',
});

if (require.main === module) runExecutorAppFromCommandLine('k8s-executor', main);
