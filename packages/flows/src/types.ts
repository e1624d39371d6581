import type { Resources, ScriptInterpreter, SelectableExecutorType } from '@sluice/protocol';

/*
 * A parsed flow file (namespaces/<ns>/flows/<flow>.yaml).
 *
 * Naming rule: everything keeps the wire name of the YAML (snake_case:
 * `depends_on`, `inject_runner`, `node_selector`, `service_account`,
 * `expected_status`, ...), because tasks and executor blocks are stored and
 * handed to executors and the runner as written. The only exceptions are the
 * policy fields the engine computes with, at flow and task level alike; they
 * are converted to engine units and camelCase on parse:
 *   retry: { max_attempts, backoff }  →  retry: { maxAttempts, backoffMs }
 *   timeout: 30m                      →  timeoutMs: 1800000
 *   max_parallel                      →  maxParallel   (flow only; `concurrency` keeps its name)
 * Defaults the format defines are filled in on parse (script interpreter,
 * HTTP method, subflow wait), so consumers never re-implement them.
 */

/** An executor block as written at one level (task, flow, namespace.yaml); every field optional. */
export interface ExecutorBlock {
  type?: SelectableExecutorType;
  pool?: string;
  image?: string;
  inject_runner?: boolean;
  resources?: Resources;
  pull?: 'always' | 'if_not_present' | 'never';
  node_selector?: Record<string, string>;
  tolerations?: Record<string, unknown>[];
  service_account?: string;
}

export type ExecutorField = keyof ExecutorBlock;

export interface RetryPolicy {
  maxAttempts: number;
  /** Wait before the next attempt; 0 when the file sets no `backoff`. */
  backoffMs: number;
}

/** A secret reference; its value is resolved only by the runner API, never stored in a task. */
export interface SecretRef {
  secret: string;
}

export type EnvValue = string | SecretRef;

interface TaskCommon {
  id: string;
  depends_on?: string[];
  env?: Record<string, EnvValue>;
  retry?: RetryPolicy;
  timeoutMs?: number;
}

/** Tasks that run a process of their own and so take an executor block. */
interface RunnableTaskCommon extends TaskCommon {
  executor?: ExecutorBlock;
}

export interface CommandTask extends RunnableTaskCommon {
  type: 'command';
  command: string[];
}

export interface ScriptTask extends RunnableTaskCommon {
  type: 'script';
  interpreter: ScriptInterpreter;
  script: string;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

export interface HttpTask extends TaskCommon {
  type: 'http';
  request: {
    method: HttpMethod;
    url: string;
    headers?: Record<string, string>;
    body?: unknown;
    expected_status?: number | number[];
  };
}

export interface SubflowTask extends TaskCommon {
  type: 'subflow';
  /** A flow id in the same namespace, or `ns/flow`. */
  flow: string;
  inputs?: Record<string, unknown>;
  wait: boolean;
}

/** A connector: an image (docker, kubernetes) or a command (process executor). */
export interface ConnectorRef {
  image?: string;
  command?: string[];
}

export type ConnectorOperation = 'spec' | 'check' | 'discover';

export interface ConnectorTask extends RunnableTaskCommon {
  type: 'connector';
  operation: ConnectorOperation;
  connector: ConnectorRef;
  config?: Record<string, unknown>;
}

export interface SyncEndpoint extends ConnectorRef {
  config?: Record<string, unknown>;
}

export interface SyncTask extends RunnableTaskCommon {
  type: 'sync';
  source: SyncEndpoint;
  destination: SyncEndpoint;
  catalog?: unknown;
}

export type Task = CommandTask | ScriptTask | HttpTask | SubflowTask | ConnectorTask | SyncTask;
export type TaskType = Task['type'];
/** Task types that run inline (no process, no executor block). */
export type InlineTask = HttpTask | SubflowTask;

export const TASK_TYPES = [
  'command',
  'script',
  'http',
  'subflow',
  'connector',
  'sync',
] as const satisfies readonly TaskType[];
export const INLINE_TASK_TYPES = ['http', 'subflow'] as const satisfies readonly InlineTask['type'][];

export function isInlineTask(task: Task): task is InlineTask {
  return task.type === 'http' || task.type === 'subflow';
}

/** The types a flow input can have; an `object` is a JSON mapping. */
export type InputType = 'string' | 'number' | 'boolean' | 'object';

/** One entry of a flow's `inputs` (docs/flow-file.md#inputs). */
export interface InputDeclaration {
  type: InputType;
  /** Without a value the execution is refused; a required input has no default. */
  required: boolean;
  /** Applied when an execution does not give the input; of the declared type. */
  default?: unknown;
  description?: string;
}

export interface Flow {
  /** The file name without `.yaml`. */
  id: string;
  namespace: string;
  /** Input name → declaration; absent when the flow declares none. */
  inputs?: Record<string, InputDeclaration>;
  executor?: ExecutorBlock;
  retry?: RetryPolicy;
  timeoutMs?: number;
  /** Executions of this flow at once. */
  concurrency?: number;
  /** Task runs of one execution at once. */
  maxParallel?: number;
  /** Cron, 5 fields (or 6 with seconds first), evaluated in UTC. */
  schedule?: string;
  /**
   * Set on a connection's flow, which only the connections API writes
   * (docs/api.md#connections): the flows API refuses to store or delete one.
   */
  connection?: boolean;
  tasks: Task[];
}

/** namespace.yaml */
export interface NamespaceConfig {
  defaults?: {
    executor?: ExecutorBlock;
  };
  /**
   * The executor types this namespace's tasks may run on; unset = all. Without `process`,
   * no task of the namespace runs on the server's host (docs/decisions.md §13).
   */
  allowed_executors?: SelectableExecutorType[];
}
