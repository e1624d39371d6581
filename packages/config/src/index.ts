export { defineVar, allVars, varsFor, APP_NAMES } from './define';
export type { AppName, VarSpec, VarDef, VarInfo } from './define';
export { ConfigError } from './errors';
export type { ConfigProblem } from './errors';
export { EnvReader } from './reader';
export type { Env } from './reader';
export {
  duration,
  list,
  int,
  bool,
  hostPort,
  httpUrl,
  postgresUrl,
  oneOf,
  text,
  ownerId,
  cpuQuantity,
  memoryQuantity,
  executorSelection,
  parseDuration,
  splitHostPort,
} from './schemas';
export type { EnvSchema, ExecutorSelection } from './schemas';
export { masterKey, masterKeyList, decodeMasterKey, MASTER_KEY_BYTES } from './keys';
export { parseEnv, parseClientEnv } from './parse';
export type { ClientEnv } from './parse';
export type { ParseOptions } from './parse';
export type * from './app-config';
export { LOG_LEVELS } from './vars/common';
export type { LogLevel } from './vars/common';
export * as vars from './vars';
export { stripControlPlaneEnv, CONTROL_PLANE_VARS } from './strip';
export { formatVarsHelp } from './help';
export * from './runner-env';
export { describeError } from './describe-error';
export { taskUser, resolveTaskUser, lookupPasswd } from './task-user';
export type { TaskUserSpec, TaskUserHost, PasswdEntry } from './task-user';
