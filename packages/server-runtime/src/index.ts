export * from './server';
export * from './secrets-source';
export * from './executors';
