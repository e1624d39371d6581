export * from './options';
export * from './local-task-run';
export * from './instance';
