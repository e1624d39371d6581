// `exec` starts once per task run on the process executor: app-main imports
// nothing at load, and each command loads only what it uses.
import {
  executorAppMain,
  runExecutorAppFromCommandLine,
  type MainIo,
} from '@sluice/executor-runtime/app-main';

export type { MainIo };

const USAGE = `Usage: sluice docker-executor [--help]
       sluice docker-executor exec      (the runner; the process executor starts it)

Runs an instance with the docker executor (and inline; process only when
SLUICE_EXECUTORS lists it). It never opens the database: it claims task runs,
reports progress and sends logs through a server's internal API
(EXECUTOR_API_URL), and serves /live, /ready and /metrics on
INTERNAL_HTTP_SERVER_ADDR. The docker executor does not start without
DOCKER_EXECUTOR_OWNER_ID, under which the instance then registers.
SLUICE_EXECUTORS=process runs a process instance on a host without Docker;
it needs no owner ID and registers under SLUICE_INSTANCE_ID (the hostname).

Environment:
`;

/**
 * `sluice docker-executor` (argv[0] is the command name) and `exec`, which the
 * process executor runs as `<node> <this file> exec`. Resolves with the exit code.
 */
export const main = executorAppMain({
  app: 'docker-executor',
  usage: USAGE,
  mainFile: __filename,
  version: process.env.SLUICE_VERSION ?? '0.1.0',
});

if (require.main === module) runExecutorAppFromCommandLine('docker-executor', main);
