export * from './registry';
export * from './errors';
export * from './common';
export * from './namespaced';
export * from './executions';
export * from './executors';
export * from './connections';
