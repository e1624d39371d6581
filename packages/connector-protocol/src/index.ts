export * from './messages';
export * from './parse-message';
export * from './output-parser';
export * from './writer';
export * from './configured-catalog';
export * from './committed-state';
export * from './state-tracker';
export * from './operation-outcome';
