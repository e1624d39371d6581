export * from './generated-secrets';
export * from './embedded-postgres';
