export * from './user-tokens';
export * from './run-tokens';
