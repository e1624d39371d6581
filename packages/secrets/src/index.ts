export * from './keyring';
