export * from './server';
export * from './secrets-source';
