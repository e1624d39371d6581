import type { z } from 'zod';
import {
  ArtifactList,
  MetricList,
  Execution,
  ExecutionCancelRequested,
  ExecutionCreated,
  ExecutionList,
  ExecutionListQuery,
  ExecutionStart,
  ExecutorList,
  FileList,
  FileWritten,
  Flow,
  FlowList,
  ErrorBody,
  InstanceList,
  ValidationErrorBody,
  LogLineView,
  LogPage,
  NamespaceList,
  NamespaceValidation,
  NamespaceValidationRequest,
  PageQuery,
  SecretBody,
  SecretList,
  TaskRunList,
} from '@sluice/api-schemas';
import { LogsQuery } from '@sluice/api-schemas/logs';
import {
  Connection,
  ConnectionBody,
  ConnectionList,
  ConnectionResetBody,
  ConnectionResetDone,
  ConnectionStored,
  LedgerPage,
} from '@sluice/api-schemas';

/** A body that is not JSON: described by a JSON Schema of its own. */
export interface RawContent {
  raw: Record<string, unknown>;
}

export type Content = z.ZodType | RawContent;

export interface Response {
  description: string;
  /** Media type → schema; none for an empty body. */
  content?: Record<string, Content>;
}

/**
 * One route of the public API as the OpenAPI document shows it. The path is
 * relative to /api/v1 with `{param}` placeholders; a test ties this list to
 * the routes the router really has (test/openapi-routes.test.ts).
 */
export interface Operation {
  method: 'get' | 'put' | 'post' | 'delete';
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Who may call it: no token, any user of the workspace, or its admins. */
  auth: 'none' | 'member' | 'admin';
  query?: z.ZodObject;
  /** `required: false`: the body may be left out (true unless said). */
  body?: { description: string; content: Record<string, Content>; limit: string; required?: boolean };
  /** The route's own answers; the common errors (401, 403, 500, ...) are added from `auth` and the path. */
  responses: Record<number, Response>;
  /** The route reads a JSON body or a YAML that is validated: 422 with the validator's issues. */
  validates?: 'flow' | 'namespace-config' | 'allowed-executors' | 'execution-start';
}

const json = (schema: z.ZodType) => ({ 'application/json': schema });
const octets: RawContent = { raw: { type: 'string', contentMediaType: 'application/octet-stream' } };

export const OPENAPI_JSON_PATH = '/openapi.json';

const connectionInvalid = {
  description:
    'The connection is invalid (its body, or the flow it becomes): every problem at once, at the body\u2019s paths; nothing was stored',
  content: json(ValidationErrorBody),
};
const syncBusy = {
  description: 'A sync of the connection is queued or running',
  content: json(ErrorBody),
};
const connectionBody = {
  description: 'The connection',
  content: json(ConnectionBody),
  limit: '4 MiB',
};

/** docs/api.md#connections */
const CONNECTION_OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/namespaces/{ns}/connections',
    operationId: 'listConnections',
    summary: 'The connections of a namespace',
    tag: 'connections',
    auth: 'member',
    query: PageQuery,
    responses: { 200: { description: 'A page of connections', content: json(ConnectionList) } },
  },
  {
    method: 'post',
    path: '/namespaces/{ns}/connections/{name}',
    operationId: 'createConnection',
    summary: 'Create a connection: stored as a flow with its schedule and one `sync` task',
    tag: 'connections',
    auth: 'member',
    body: connectionBody,
    responses: {
      201: { description: 'The stored connection', content: json(ConnectionStored) },
      409: { description: 'A connection or flow of that name exists', content: json(ErrorBody) },
      422: connectionInvalid,
    },
  },
  {
    method: 'put',
    path: '/namespaces/{ns}/connections/{name}',
    operationId: 'replaceConnection',
    summary: 'Replace a connection (its committed state stays)',
    tag: 'connections',
    auth: 'member',
    body: connectionBody,
    responses: {
      200: { description: 'The stored connection', content: json(ConnectionStored) },
      404: { description: 'No such connection in the caller\u2019s workspace', content: json(ErrorBody) },
      422: connectionInvalid,
    },
  },
  {
    method: 'get',
    path: '/namespaces/{ns}/connections/{name}',
    operationId: 'getConnection',
    summary: 'A connection with its committed state, last syncs and the newest page of its ledger',
    tag: 'connections',
    auth: 'member',
    responses: { 200: { description: 'The connection', content: json(Connection) } },
  },
  {
    method: 'get',
    path: '/namespaces/{ns}/connections/{name}/ledger',
    operationId: 'listConnectionLedger',
    summary: 'A connection\u2019s commit ledger, newest first',
    tag: 'connections',
    auth: 'member',
    query: PageQuery,
    responses: { 200: { description: 'A page of the ledger', content: json(LedgerPage) } },
  },
  {
    method: 'post',
    path: '/namespaces/{ns}/connections/{name}/reset',
    operationId: 'resetConnection',
    summary: 'Reset the committed state of some streams, or of the whole connection',
    tag: 'connections',
    auth: 'member',
    body: {
      description: 'The streams; none or an empty body: all',
      content: json(ConnectionResetBody),
      limit: '64 KiB',
      required: false,
    },
    responses: {
      200: { description: 'Reset; the state left', content: json(ConnectionResetDone) },
      409: syncBusy,
    },
  },
  {
    method: 'delete',
    path: '/namespaces/{ns}/connections/{name}',
    operationId: 'deleteConnection',
    summary: 'Delete a connection: its flow and committed state (its executions and ledger stay)',
    tag: 'connections',
    auth: 'member',
    responses: { 204: { description: 'Deleted' }, 409: syncBusy },
  },
];

export const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: OPENAPI_JSON_PATH,
    operationId: 'getOpenApiDocument',
    summary: 'This document. Served without a token: it describes the API and holds no data.',
    tag: 'meta',
    auth: 'none',
    responses: {
      200: {
        description: 'The OpenAPI 3.1 document',
        content: { 'application/json': { raw: { type: 'object' } } },
      },
    },
  },
  {
    method: 'get',
    path: '/namespaces',
    operationId: 'listNamespaces',
    summary: 'The namespaces of the caller\u2019s workspace',
    tag: 'namespaces',
    auth: 'member',
    query: PageQuery,
    responses: { 200: { description: 'A page of namespaces', content: json(NamespaceList) } },
  },
  {
    method: 'get',
    path: '/namespaces/{ns}/flows',
    operationId: 'listFlows',
    summary: 'The flows of a namespace',
    tag: 'flows',
    auth: 'member',
    query: PageQuery,
    responses: { 200: { description: 'A page of flows', content: json(FlowList) } },
  },
  {
    method: 'put',
    path: '/namespaces/{ns}/flows/{flow}',
    operationId: 'putFlow',
    summary: 'Create or replace a flow (the YAML of docs/flow-file.md)',
    tag: 'flows',
    auth: 'member',
    body: {
      description: 'The flow file',
      content: { 'application/yaml': { raw: { type: 'string' } } },
      limit: '1 MiB',
    },
    validates: 'flow',
    responses: {
      200: { description: 'The stored flow', content: json(Flow) },
      409: {
        description: 'The flow is a connection\u2019s: change it through /connections',
        content: json(ErrorBody),
      },
    },
  },
  {
    method: 'get',
    path: '/namespaces/{ns}/flows/{flow}',
    operationId: 'getFlow',
    summary: 'One flow',
    tag: 'flows',
    auth: 'member',
    responses: { 200: { description: 'The flow', content: json(Flow) } },
  },
  {
    method: 'delete',
    path: '/namespaces/{ns}/flows/{flow}',
    operationId: 'deleteFlow',
    summary: 'Delete a flow (its executions stay)',
    tag: 'flows',
    auth: 'member',
    responses: {
      204: { description: 'Deleted' },
      409: {
        description: 'The flow is a connection\u2019s: delete it through /connections',
        content: json(ErrorBody),
      },
    },
  },
  ...CONNECTION_OPERATIONS,
  {
    method: 'post',
    path: '/namespaces/{ns}/validate',
    operationId: 'validateNamespace',
    summary:
      'Check a namespace folder (namespace.yaml and flows) as the flow and file PUTs would, storing nothing; `sluice apply` calls it first.',
    tag: 'flows',
    auth: 'member',
    body: {
      description: 'The files to check',
      content: json(NamespaceValidationRequest),
      limit: '10 MiB',
    },
    responses: {
      200: {
        description: 'Every file\u2019s problems (none when `valid`)',
        content: json(NamespaceValidation),
      },
    },
  },
  {
    method: 'post',
    path: '/namespaces/{ns}/flows/{flow}/executions',
    operationId: 'createExecution',
    summary: 'Start an execution of the flow, with its inputs',
    tag: 'executions',
    auth: 'member',
    body: {
      description: 'The inputs (docs/api.md#starting-an-execution); an empty body gives none',
      content: json(ExecutionStart),
      limit: '1 MiB',
      required: false,
    },
    validates: 'execution-start',
    responses: { 201: { description: 'The execution, queued', content: json(ExecutionCreated) } },
  },
  {
    method: 'get',
    path: '/namespaces/{ns}/files',
    operationId: 'listFiles',
    summary: 'The files of a namespace, without their content',
    tag: 'files',
    auth: 'member',
    query: PageQuery,
    responses: { 200: { description: 'A page of files', content: json(FileList) } },
  },
  {
    method: 'put',
    path: '/namespaces/{ns}/files/{path}',
    operationId: 'putFile',
    summary:
      'Create or replace a namespace file. `namespace.yaml` is validated; changing its `allowed_executors` needs the admin role.',
    tag: 'files',
    auth: 'member',
    body: {
      description: 'The file\u2019s bytes',
      content: { 'application/octet-stream': octets },
      limit: '10 MiB',
    },
    validates: 'namespace-config',
    responses: { 200: { description: 'Stored', content: json(FileWritten) } },
  },
  {
    method: 'get',
    path: '/namespaces/{ns}/files/{path}',
    operationId: 'getFile',
    summary: 'A namespace file\u2019s content',
    tag: 'files',
    auth: 'member',
    responses: { 200: { description: 'The bytes', content: { 'application/octet-stream': octets } } },
  },
  {
    method: 'delete',
    path: '/namespaces/{ns}/files/{path}',
    operationId: 'deleteFile',
    summary: 'Delete a namespace file',
    tag: 'files',
    auth: 'member',
    responses: { 204: { description: 'Deleted' } },
  },
  {
    method: 'get',
    path: '/namespaces/{ns}/secrets',
    operationId: 'listSecrets',
    summary: 'The names of a namespace\u2019s secrets (never a value)',
    tag: 'secrets',
    auth: 'admin',
    responses: { 200: { description: 'The names', content: json(SecretList) } },
  },
  {
    method: 'put',
    path: '/namespaces/{ns}/secrets/{name}',
    operationId: 'putSecret',
    summary: 'Create or replace a secret; it is stored encrypted',
    tag: 'secrets',
    auth: 'admin',
    body: { description: 'The value', content: json(SecretBody), limit: '128 KiB' },
    responses: { 204: { description: 'Stored' } },
  },
  {
    method: 'delete',
    path: '/namespaces/{ns}/secrets/{name}',
    operationId: 'deleteSecret',
    summary: 'Delete a secret',
    tag: 'secrets',
    auth: 'admin',
    responses: { 204: { description: 'Deleted' } },
  },
  {
    method: 'get',
    path: '/executions',
    operationId: 'listExecutions',
    summary: 'The workspace\u2019s executions, newest first, filtered',
    tag: 'executions',
    auth: 'member',
    query: ExecutionListQuery,
    responses: { 200: { description: 'A page of executions', content: json(ExecutionList) } },
  },
  {
    method: 'get',
    path: '/executions/{id}',
    operationId: 'getExecution',
    summary: 'One execution with its task runs',
    tag: 'executions',
    auth: 'member',
    responses: { 200: { description: 'The execution', content: json(Execution) } },
  },
  {
    method: 'get',
    path: '/executions/{id}/task-runs',
    operationId: 'listTaskRuns',
    summary: 'The task runs of an execution',
    tag: 'executions',
    auth: 'member',
    responses: { 200: { description: 'Its task runs', content: json(TaskRunList) } },
  },
  {
    method: 'post',
    path: '/executions/{id}/cancel',
    operationId: 'cancelExecution',
    summary: 'Request the execution\u2019s cancel; its task runs stop',
    tag: 'executions',
    auth: 'member',
    responses: { 202: { description: 'Cancel requested', content: json(ExecutionCancelRequested) } },
  },
  {
    method: 'get',
    path: '/task-runs/{id}/logs',
    operationId: 'getLogs',
    summary: 'A task run\u2019s log lines after `after`; with `follow=true` a stream until the task run ends',
    tag: 'task runs',
    auth: 'member',
    query: LogsQuery,
    responses: {
      200: {
        description: 'A page of lines; with `follow`, newline-delimited JSON, one `LogLine` per line',
        content: { 'application/json': LogPage, 'application/x-ndjson': LogLineView },
      },
    },
  },
  {
    method: 'get',
    path: '/task-runs/{id}/metrics',
    operationId: 'listMetrics',
    summary: 'The metrics a task run reported',
    tag: 'task runs',
    auth: 'member',
    responses: { 200: { description: 'Metrics in the order received', content: json(MetricList) } },
  },
  {
    method: 'get',
    path: '/task-runs/{id}/artifacts',
    operationId: 'listArtifacts',
    summary: 'The artifacts a task run uploaded, without their content',
    tag: 'task runs',
    auth: 'member',
    responses: { 200: { description: 'Names and sizes', content: json(ArtifactList) } },
  },
  {
    method: 'get',
    path: '/task-runs/{id}/artifacts/{name}',
    operationId: 'getArtifact',
    summary: 'One artifact\u2019s content',
    tag: 'task runs',
    auth: 'member',
    responses: { 200: { description: 'The bytes', content: { 'application/octet-stream': octets } } },
  },
  {
    method: 'get',
    path: '/executors',
    operationId: 'listExecutors',
    summary: 'The online instances (installation-wide)',
    tag: 'executors',
    auth: 'member',
    responses: { 200: { description: 'Online instances', content: json(ExecutorList) } },
  },
  {
    method: 'get',
    path: '/instances',
    operationId: 'listInstances',
    summary: 'Every registered instance, online or not (installation-wide)',
    tag: 'executors',
    auth: 'admin',
    responses: { 200: { description: 'Instances', content: json(InstanceList) } },
  },
];
