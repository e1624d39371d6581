export * from './types';
export * from './commit';
export * from './read';
