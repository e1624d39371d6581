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
// The wrapper a docker sync's connector containers run (`sluice connector-pipe`), and the runner's side of its pipes.
export { runConnectorPipe } from './sync/fifo-connector-pipe';
export type { ConnectorPipeIo } from './sync/fifo-connector-pipe';
export { openFifoConnector } from './sync/fifo-pipes';
// The kubernetes init container of a sync lays out the sync emptyDir (`runner-install --sync-layout`).
export { createSyncLayout } from './sync/fifo-layout';
export type { FifoConnector, FifoConnectorOptions } from './sync/fifo-pipes';
export { FifoEndpointStarter } from './sync/fifo-endpoint';
export type { FifoEndpointOptions } from './sync/fifo-endpoint';
export { runConnectorCommand } from './connector-test/command';
export type { ConnectorCommandIo } from './connector-test/command';
