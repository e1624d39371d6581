import { z } from 'zod';
import { CODES } from '@sluice/flows';
import { named } from './registry';

/**
 * Every `error.code` of the public API's `{"error":{"code","message"}}`
 * bodies (src/http-errors.ts and the routes), with when it is answered.
 */
export const PUBLIC_ERROR_CODES = {
  bad_request: '400: a request the server could not read',
  invalid_request: '400: a query parameter or body that does not have the documented shape',
  invalid_json: '400: a JSON body that does not parse',
  invalid_name: '400: a namespace, flow or secret name outside the naming rules (docs/input-validation.md)',
  invalid_path: '400: a namespace file path outside the path rules (docs/input-validation.md)',
  invalid_cursor: '400: a `cursor` that is not one a list of this server returned',
  unauthorized: '401: a missing, invalid or expired user token',
  forbidden: '403: the call needs the admin role',
  not_found: '404: no such object in the caller\u2019s workspace (or no such route)',
  conflict: '409: the request conflicts with the current state',
  payload_too_large: '413: the body is larger than the route accepts',
  unsupported_media_type: '415: a body of a type the route does not read',
  executor_type_not_allowed:
    '422: a task of the flow runs on an executor type its namespace.yaml `allowed_executors` does not allow',
  error: 'another 4xx the server could not classify',
  internal: '500: an unexpected failure; the detail is in the server log',
} as const;

export const ErrorBody = named(
  'Error',
  z.object({
    error: z.object({
      code: z
        .enum(Object.keys(PUBLIC_ERROR_CODES) as [keyof typeof PUBLIC_ERROR_CODES])
        .describe('Listed with their meaning in the description of this document.'),
      message: z.string(),
    }),
  }),
  'Every error except a validation failure: a machine-readable code and a message for people.',
);

export const ValidationIssue = named(
  'ValidationIssue',
  z.object({
    code: z
      .enum(Object.keys(CODES) as [keyof typeof CODES])
      .describe('Listed with their meaning in the description of this document.'),
    path: z.string(),
    message: z.string(),
  }),
  'One problem of a flow file or namespace.yaml. `path` is dotted (`tasks[1].executor.image`).',
);

export const ValidationErrorBody = named(
  'ValidationErrors',
  z.object({ errors: z.array(ValidationIssue) }),
  'A 422 of the flow validator: every problem of the file at once.',
);
