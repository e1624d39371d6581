export { cliMain, CLI_COMMANDS } from './main';
export { mapIssueToLine } from './apply/lines';
export type { Io } from './io';
