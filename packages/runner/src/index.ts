export { runTask } from './run-task';
export type { RunTaskOptions, RunTaskResult } from './run-task';
export { locateSelfContainedRunner, runnerInstall, RunnerInstallUnavailableError } from './runner-install';
export type { SelfContainedRunner } from './runner-install';
export { INHERITED_VARIABLES } from './child-env';
export { SnapshotRejectedError } from './snapshot';
export { runExecCommand } from './exec-command';
export type { ExecIo } from './exec-command';
// For the runner app's --help: its binaries load the runner and nothing else (a second copy of the config package would slow exec).
export { formatVarsHelp } from '@sluice/config';
export { runConnectorCommand } from './connector-test/command';
export type { ConnectorCommandIo } from './connector-test/command';
