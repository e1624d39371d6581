export { runCleanup } from './cleanup';
export type { CleanupOptions, CleanupResult } from './cleanup';
export { startCleanupLoop, startPassLoop } from './cleanup-loop';
export type { CleanupLoop, CleanupLoopOptions } from './cleanup-loop';
export { startDockerCleanup } from './docker-adoption';
export type { AdoptionTarget, DockerCleanupOptions } from './docker-adoption';
export { runKubernetesCleanup, startKubernetesCleanup } from './kubernetes-cleanup';
export type { KubernetesCleanupOptions, KubernetesCleanupResult } from './kubernetes-cleanup';
