export * from './common';
export * from './scheduling';
export * from './instance';
export * from './executors';
export * from './client';
