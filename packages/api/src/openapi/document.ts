import { z } from 'zod';
import { CODES, FILE_PATH_MAX_BYTES, NAME_MAX_LENGTH } from '@sluice/flows';
import { apiSchemas, PUBLIC_ERROR_CODES } from '@sluice/api-schemas';
import { OPERATIONS, type Content, type Operation } from './operations';

type JsonSchema = Record<string, unknown>;

const COMPONENT = (id: string) => `#/components/schemas/${id}`;

/** The named schemas as JSON Schema 2020-12 (what OpenAPI 3.1 uses), referring to each other by $ref. */
function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(apiSchemas, { target: 'draft-2020-12', uri: COMPONENT }) as {
    schemas: Record<string, JsonSchema>;
  };
  // A component is a schema object inside the document, not a document of its own.
  for (const schema of Object.values(schemas)) {
    delete schema.$schema;
    delete schema.$id;
  }
  return schemas;
}

function schemaOf(content: Content): JsonSchema {
  if ('raw' in content && !(content instanceof z.ZodType)) return content.raw;
  const meta = apiSchemas.get(content);
  if (!meta)
    throw new Error('a response or body schema of the public API must be named (schemas/registry.ts)');
  return { $ref: COMPONENT(meta.id) };
}

const media = (content: Record<string, Content>) =>
  Object.fromEntries(Object.entries(content).map(([type, c]) => [type, { schema: schemaOf(c) }]));

const PATH_PARAMETERS: Record<string, { description: string; schema: JsonSchema }> = {
  ns: {
    description: 'A namespace of the caller\u2019s workspace (docs/input-validation.md: names).',
    schema: { type: 'string', minLength: 1, maxLength: NAME_MAX_LENGTH },
  },
  flow: {
    description: 'A flow id (the same naming rules).',
    schema: { type: 'string', minLength: 1, maxLength: NAME_MAX_LENGTH },
  },
  name: {
    description:
      'A secret or connection name (the naming rules), or an artifact name (which may contain `/`).',
    schema: { type: 'string', minLength: 1 },
  },
  id: { description: 'An execution or task run id.', schema: { type: 'string', format: 'uuid' } },
  path: {
    description:
      'A file path relative to the namespace; `/` separates directories (sent as is or as %2F). Rules: docs/input-validation.md.',
    schema: { type: 'string', minLength: 1, maxLength: FILE_PATH_MAX_BYTES },
  },
};

function parameters(op: Operation): JsonSchema[] {
  const path = [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => {
    const p = PATH_PARAMETERS[name!];
    if (!p) throw new Error(`no description of the path parameter {${name}}`);
    return { name, in: 'path', required: true, ...p };
  });
  const query = Object.entries(op.query?.shape ?? {}).map(([name, field]) => {
    const schema = z.toJSONSchema(field as z.ZodType, { target: 'draft-2020-12', io: 'input' }) as JsonSchema;
    delete schema.$schema;
    const { description, ...rest } = schema;
    return {
      name,
      in: 'query',
      required: !(field as z.ZodType).safeParse(undefined).success,
      ...(description === undefined ? {} : { description }),
      schema: rest,
    };
  });
  return [...path, ...query];
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: COMPONENT('Error') } } },
});
const validationResponse = {
  description: 'The flow or namespace.yaml is invalid: every problem at once; nothing was stored',
  content: { 'application/json': { schema: { $ref: COMPONENT('ValidationErrors') } } },
};

const executionStartRefused = {
  description:
    'Nothing was created: `executor_type_not_allowed` (an Error), or the inputs do not match the flow\u2019s declaration or the flow no longer validates against its namespace.yaml (ValidationErrors, each input problem at `inputs.<name>`)',
  content: {
    'application/json': {
      schema: { oneOf: [{ $ref: COMPONENT('Error') }, { $ref: COMPONENT('ValidationErrors') }] },
    },
  },
};

/** The route's own responses plus the errors every route of its kind can answer. */
function responses(op: Operation): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(op.responses))
    out[status] = r.content
      ? { description: r.description, content: media(r.content) }
      : { description: r.description };
  const hasParams = /\{\w+\}/.test(op.path);
  if (hasParams || op.query || op.body)
    out['400'] = errorResponse('A malformed name, path, query parameter, cursor or body');
  if (op.auth !== 'none') out['401'] = errorResponse('No valid user token');
  if (op.auth === 'admin' || op.validates === 'namespace-config')
    out['403'] = errorResponse(
      op.auth === 'admin'
        ? 'The call needs the admin role'
        : 'Changing `allowed_executors` needs the admin role',
    );
  if (hasParams && op.method !== 'put')
    out['404'] = errorResponse('No such object in the caller\u2019s workspace');
  if (op.body) out['413'] = errorResponse(`The body is larger than ${op.body.limit}`);
  if (op.validates === 'flow' || op.validates === 'namespace-config') out['422'] = validationResponse;
  if (op.validates === 'allowed-executors')
    out['422'] = errorResponse(
      '`executor_type_not_allowed`: a task runs on an executor type the namespace forbids',
    );
  if (op.validates === 'execution-start') out['422'] = executionStartRefused;
  out['500'] = errorResponse('An unexpected failure (`internal`); the detail is in the server log');
  return out;
}

function operation(op: Operation): Record<string, unknown> {
  const params = parameters(op);
  return {
    operationId: op.operationId,
    summary: op.summary,
    tags: [op.tag],
    ...(op.auth === 'none' ? { security: [] } : {}),
    ...(op.auth === 'admin' ? { description: 'Needs a token with the admin role.' } : {}),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required ?? true,
            description: op.body.description,
            content: media(op.body.content),
          },
        }
      : {}),
    responses: responses(op),
  };
}

const codeList = (codes: Record<string, string>) =>
  Object.entries(codes)
    .map(([code, meaning]) => `- \`${code}\`: ${meaning}`)
    .join('\n');

/** The OpenAPI 3.1 document of the public API, built from the zod schemas that parse its requests. */
export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) (paths[op.path] ??= {})[op.method] = operation(op);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sluice public API',
      version: '1',
      description: [
        'Flows, namespace files, secrets and executions of the caller\u2019s workspace (docs/api.md).',
        '',
        'Errors are `{"error":{"code","message"}}`, with these codes:',
        codeList(PUBLIC_ERROR_CODES),
        '',
        'A flow or namespace.yaml that does not validate is a `422` of `{"errors":[{"code","path","message"}]}`, with these codes:',
        codeList(CODES),
      ].join('\n'),
    },
    servers: [{ url: '/api/v1' }],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(OPERATIONS.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A user token of one workspace (`sluice token create`).',
        },
      },
      schemas: componentSchemas(),
    },
  };
}

let cached: Record<string, unknown> | undefined;

/** Built once per process: the schemas do not change at run time. */
export function openApiDocument(): Record<string, unknown> {
  return (cached ??= buildOpenApiDocument());
}
