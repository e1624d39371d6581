export * from './postgres';
export * from './databases';
