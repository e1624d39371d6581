import { z } from 'zod';
import { ResolvedExecutor } from './executor-block';
import { ExecutorType, TaskRunReason } from './states';
import { LogLine } from './runner-api';

/**
 * The executor protocol: how an instance (the embedded one of a standalone
 * server, a docker-executor, a k8s-executor) talks to the server. Two
 * implementations: a direct in-process binding and the HTTP executor API
 * (/internal/v1/executor/...). Executors cannot tell them apart.
 */

export const InstanceRegistration = z.object({
  instanceId: z.string().min(1),
  type: z.enum(['standalone', 'docker-executor', 'k8s-executor']),
  version: z.string(),
  /** Slots per executor type; null = no per-instance limit. */
  capacity: z.record(z.string(), z.number().int().nonnegative().nullable()),
  pools: z.array(z.string()),
  executors: z.array(ExecutorType),
  resourceDefaults: z.record(z.string(), z.string()).default({}),
});
export type InstanceRegistration = z.infer<typeof InstanceRegistration>;

export const ClaimRequest = z.object({
  instanceId: z.string().min(1),
  executorTypes: z.array(ExecutorType).min(1),
  /** Pools served; ignored for inline task runs, which have none. */
  pools: z.array(z.string()),
  limit: z.number().int().positive().max(100),
});
export type ClaimRequest = z.infer<typeof ClaimRequest>;

/** A claimed task run as an executor receives it. No secret values here: the runner fetches them. */
export const ClaimedTaskRun = z.object({
  taskRunId: z.string(),
  executionId: z.string(),
  taskId: z.string(),
  attempt: z.number().int().positive(),
  fence: z.number().int(),
  executor: ResolvedExecutor,
  timeoutMs: z.number().int().positive(),
  /** The task as stored (type and its fields, templates rendered, secret references unresolved). */
  task: z.record(z.string(), z.unknown()),
  /** Per-task-run JWT for the runner API; passed to the runner as SLUICE_RUN_TOKEN. */
  runToken: z.string(),
});
export type ClaimedTaskRun = z.infer<typeof ClaimedTaskRun>;

export const FencedTaskRunRef = z.object({ taskRunId: z.string(), fence: z.number().int() });
export type FencedTaskRunRef = z.infer<typeof FencedTaskRunRef>;

export const MarkStartedRequest = FencedTaskRunRef.extend({ externalRef: z.string().nullable() });
export type MarkStartedRequest = z.infer<typeof MarkStartedRequest>;

export const ExecutorLogBatch = FencedTaskRunRef.extend({ lines: z.array(LogLine).max(5000) });
export type ExecutorLogBatch = z.infer<typeof ExecutorLogBatch>;

export const CompletionRequest = FencedTaskRunRef.extend({
  state: z.enum(['SUCCEEDED', 'FAILED', 'CANCELLED']),
  reason: TaskRunReason.nullable().default(null),
  exitCode: z.number().int().nullable().default(null),
  error: z.string().max(8192).nullable().default(null),
  outputs: z.record(z.string(), z.string()).default({}),
});
export type CompletionRequest = z.input<typeof CompletionRequest>;

export const CompletionResponse = z.object({ applied: z.boolean(), state: z.string() });
export type CompletionResponse = z.infer<typeof CompletionResponse>;

export const StillRunningResponse = z.object({ running: z.boolean() });

/** A subflow task asks the server to start its child execution (idempotent per task run). */
export const StartSubflowRequest = FencedTaskRunRef.extend({
  /** `flow` in the parent's namespace, or `namespace/flow`. */
  flow: z.string().min(1),
  inputs: z.record(z.string(), z.unknown()).default({}),
  /** true: the task run is parked until the child ends, and the child's end completes it. */
  wait: z.boolean(),
});
export type StartSubflowRequest = z.input<typeof StartSubflowRequest>;
export const StartSubflowResponse = z.object({ executionId: z.string() });
export type StartSubflowResponse = z.infer<typeof StartSubflowResponse>;

export const CancelRequestedRequest = z.object({ taskRunIds: z.array(z.string()).max(1000) });
export const CancelRequestedResponse = z.object({ taskRunIds: z.array(z.string()) });

export const WaitForWorkResponse = z.object({ queued: z.boolean() });

/** Executor API paths, under INTERNAL_HTTP_SERVER_ADDR of any server; every call carries X-Internal-Secret. */
export const EXECUTOR_API_PREFIX = '/internal/v1/executor';
export const INTERNAL_SECRET_HEADER = 'x-internal-secret';
/** Sent with claims (and any call a client may retry) so a retry never applies twice. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const executorPaths = {
  register: () => `${EXECUTOR_API_PREFIX}/register`,
  claim: () => `${EXECUTOR_API_PREFIX}/claim`,
  /** Long poll: answers when task runs are queued anywhere, or after `timeoutMs`. */
  waitForWork: (timeoutMs: number) => `${EXECUTOR_API_PREFIX}/wait-for-work?timeoutMs=${timeoutMs}`,
  cancelRequested: () => `${EXECUTOR_API_PREFIX}/cancel-requested`,
  started: (id: string) => `${EXECUTOR_API_PREFIX}/task-runs/${id}/started`,
  heartbeat: (id: string) => `${EXECUTOR_API_PREFIX}/task-runs/${id}/heartbeat`,
  logs: (id: string) => `${EXECUTOR_API_PREFIX}/task-runs/${id}/logs`,
  complete: (id: string) => `${EXECUTOR_API_PREFIX}/task-runs/${id}/complete`,
  running: (id: string) => `${EXECUTOR_API_PREFIX}/task-runs/${id}/running`,
  subflow: (id: string) => `${EXECUTOR_API_PREFIX}/task-runs/${id}/subflow`,
} as const;

/** Thrown (or answered as 409) when a write carries a fence older than the task run's. */
export class StaleFenceError extends Error {
  readonly code = 'stale_fence';
  constructor(taskRunId: string, fence: number) {
    super(`task run ${taskRunId}: fence ${fence} is stale; a newer claim owns it or it has ended`);
    this.name = 'StaleFenceError';
  }
}

export interface ExecutorProtocol {
  register(registration: InstanceRegistration): Promise<void>;
  claim(request: ClaimRequest): Promise<ClaimedTaskRun[]>;
  /** STARTING → RUNNING is the runner's job; this records the executor's external reference. */
  markStarted(request: MarkStartedRequest): Promise<void>;
  /** Answer says whether the task run should be cancelled. Throws StaleFenceError. */
  heartbeat(ref: FencedTaskRunRef): Promise<{ cancel: boolean }>;
  reportLogs(batch: ExecutorLogBatch): Promise<void>;
  /** Idempotent: a task run that already ended answers applied=false; a stale fence throws. */
  complete(request: CompletionRequest): Promise<CompletionResponse>;
  /** For cleanup and adoption: is this task run still STARTING or RUNNING? Unknown ids are false. */
  isStillRunning(taskRunId: string): Promise<boolean>;
  /** Cancel requests among the given task runs (one round trip for a whole instance). */
  cancelRequested(taskRunIds: string[]): Promise<string[]>;
  /** Starts the child execution of a subflow task run; the same task run always gets the same child. */
  startSubflow(request: StartSubflowRequest): Promise<StartSubflowResponse>;
  /**
   * Resolves true as soon as task runs are queued anywhere (PostgreSQL
   * NOTIFY, relayed by the server), false after `timeoutMs` without any.
   * Instances call it in a loop and claim when it answers true.
   */
  waitForWork(timeoutMs: number): Promise<boolean>;
}

/** The answer of POST claim (added with the HTTP executor API; the other answers are defined above). */
export const ClaimResponse = z.object({ taskRuns: z.array(ClaimedTaskRun) });
export type ClaimResponse = z.infer<typeof ClaimResponse>;
