export * from './states';
export * from './executor-block';
export * from './errors';
export * from './runner-api';
export * from './executor-protocol';
export * from './runner-client';
