export { runCleanup } from './cleanup';
export type { CleanupOptions, CleanupResult } from './cleanup';
export { startCleanupLoop } from './cleanup-loop';
export type { CleanupLoop, CleanupLoopOptions } from './cleanup-loop';
export { startDockerCleanup } from './docker-adoption';
export type { AdoptionTarget, DockerCleanupOptions } from './docker-adoption';
