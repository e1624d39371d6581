export * from './generated-secrets';
export * from './embedded-postgres';
export { ensureDataDir } from './data-dir';
export { acquireDataDirLock, LOCK_FILE } from './data-dir-lock';
export type { DataDirLock } from './data-dir-lock';
export { postmasterPid } from './leftover-postgres';
export { postgresBinaries } from './postgres-binaries';
export type { PostgresBinaries } from './postgres-binaries';
