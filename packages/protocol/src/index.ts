export * from './states';
export * from './executor-block';
export * from './errors';
export * from './runner-api';
export * from './executor-protocol';
export * from './runner-client';
export * from './executor-client';
export * from './env-allowlist';
