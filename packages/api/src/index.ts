export * from './context';
export * from './http-errors';
export * from './user-auth';
export * from './public-app';
export * from './internal-app';
export * from './runner-router';
export * from './executor-router';
export { buildOpenApiDocument, openApiDocument } from './openapi/document';
export { OPERATIONS, type Operation } from './openapi/operations';
