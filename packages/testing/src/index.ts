export * from './postgres';
export * from './databases';
export * from './processes';
