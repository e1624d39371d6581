export { cliMain, CLI_COMMANDS } from './main';
export type { Io } from './io';
