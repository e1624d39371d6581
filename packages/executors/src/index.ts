export * from './logger';
export * from './errors';
export * from './executor';
export * from './settle';
export * from './runner-environment';
export * from './process-executor';
export * from './http-task';
export * from './inline-executor';
