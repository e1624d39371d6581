import { z } from 'zod';

/**
 * The runner API: what `sluice exec` exchanges with a server, under
 * /internal/v1/runner, each call with `Authorization: Bearer <run token>`.
 * The run token is bound to one task run and one fence; every write carries
 * the fence as well, and the server refuses a stale one with 409.
 */
export const RUNNER_API_PREFIX = '/internal/v1/runner';

export const runnerPaths = {
  spec: (id: string) => `${RUNNER_API_PREFIX}/task-runs/${id}/spec`,
  snapshot: (id: string) => `${RUNNER_API_PREFIX}/task-runs/${id}/snapshot`,
  started: (id: string) => `${RUNNER_API_PREFIX}/task-runs/${id}/started`,
  logs: (id: string) => `${RUNNER_API_PREFIX}/task-runs/${id}/logs`,
  outputs: (id: string) => `${RUNNER_API_PREFIX}/task-runs/${id}/outputs`,
  metrics: (id: string) => `${RUNNER_API_PREFIX}/task-runs/${id}/metrics`,
  artifact: (id: string, name: string) =>
    `${RUNNER_API_PREFIX}/task-runs/${id}/artifacts/${encodeURIComponent(name)}`,
  heartbeat: (id: string) => `${RUNNER_API_PREFIX}/task-runs/${id}/heartbeat`,
  result: (id: string) => `${RUNNER_API_PREFIX}/task-runs/${id}/result`,
  /** POST: a sync task commits a state its destination acknowledged (docs/connectors.md#sync). */
  syncState: (id: string) => `${RUNNER_API_PREFIX}/task-runs/${id}/sync/state`,
} as const;

/** Header that carries the fence on raw-body uploads (artifacts). */
export const FENCE_HEADER = 'x-sluice-fence';

export const ScriptInterpreter = z.enum(['bash', 'sh', 'python', 'node', 'bun']);
export type ScriptInterpreter = z.infer<typeof ScriptInterpreter>;

export const RunnerLimits = z.object({
  /** Largest single artifact file, bytes. */
  artifactMaxBytes: z.number().int().positive(),
  /** All artifacts of one task run together, bytes. */
  artifactsTotalMaxBytes: z.number().int().positive(),
  /** Largest single output value, bytes. */
  outputValueMaxBytes: z.number().int().positive(),
  /** Longest log line kept; longer lines are cut and marked. */
  logLineMaxBytes: z.number().int().positive(),
});
export type RunnerLimits = z.infer<typeof RunnerLimits>;

export const ConnectorOperation = z.enum(['spec', 'check', 'discover']);
export type ConnectorOperation = z.infer<typeof ConnectorOperation>;

/**
 * A connector task: one operation of a connector (docs/connectors.md). `config`
 * is the flow's config with its secret references resolved, so it travels only
 * here; `spec` takes none. A command on the process executor; an image on a
 * container executor.
 */
export const ConnectorTaskPart = z
  .object({
    type: z.literal('connector'),
    operation: ConnectorOperation,
    command: z.array(z.string()).min(1).optional(),
    image: z.string().min(1).optional(),
    config: z.record(z.string(), z.unknown()),
  })
  .refine((t) => t.command !== undefined || t.image !== undefined, {
    message: 'a connector task needs a command or an image',
  });
export type ConnectorTaskPart = z.infer<typeof ConnectorTaskPart>;

export const SyncStateType = z.enum(['STREAM', 'GLOBAL', 'LEGACY']);
export type SyncStateType = z.infer<typeof SyncStateType>;

/** One end of a sync: a command (process executor) or an image, and its config with secrets resolved. */
export const SyncEndpointPart = z
  .object({
    command: z.array(z.string()).min(1).optional(),
    image: z.string().min(1).optional(),
    config: z.record(z.string(), z.unknown()),
  })
  .refine((e) => e.command !== undefined || e.image !== undefined, {
    message: 'a sync source or destination needs a command or an image',
  });
export type SyncEndpointPart = z.infer<typeof SyncEndpointPart>;

/** A stream of a configured catalog; `namespace` null when it has none. */
export const SyncStreamRef = z.object({ name: z.string().min(1), namespace: z.string().nullable() });
export type SyncStreamRef = z.infer<typeof SyncStreamRef>;

/**
 * One committed state of the sync's connection, as stored: a stream's (STREAM)
 * or the whole connection's (GLOBAL, LEGACY). `state` is the source's state
 * object as JSON text, exactly as committed, so the next `read --state` gets it
 * without a round trip through another parser.
 */
export const SyncCommittedEntry = z.object({
  stateType: SyncStateType,
  stream: SyncStreamRef.nullable(),
  state: z.string(),
});
export type SyncCommittedEntry = z.infer<typeof SyncCommittedEntry>;

/**
 * A sync task (docs/connectors.md#sync): the runner reads from the source and
 * writes into the destination. `catalog` is the configured catalog, checked by
 * the runner (@sluice/connector-protocol); `committedState` is the
 * connection's committed state when the spec was fetched: where this attempt starts.
 */
export const SyncTaskPart = z.object({
  type: z.literal('sync'),
  source: SyncEndpointPart,
  destination: SyncEndpointPart,
  catalog: z.looseObject({ streams: z.array(z.unknown()) }),
  committedState: z.array(SyncCommittedEntry),
});
export type SyncTaskPart = z.infer<typeof SyncTaskPart>;

/** GET spec: everything the runner needs; the only place secret values travel. */
export const RunnerTaskSpec = z.object({
  taskRunId: z.string(),
  executionId: z.string(),
  taskId: z.string(),
  attempt: z.number().int().positive(),
  fence: z.number().int(),
  task: z.discriminatedUnion('type', [
    z.object({ type: z.literal('command'), command: z.array(z.string()).min(1) }),
    z.object({ type: z.literal('script'), interpreter: ScriptInterpreter, script: z.string() }),
    ConnectorTaskPart,
    SyncTaskPart,
  ]),
  /** Resolved environment of the task, secrets included. */
  env: z.record(z.string(), z.string()),
  /**
   * Every resolved secret value in this spec (e.g. the values of `env` entries
   * that were `{ secret: name }`), so the runner can mask them in what it
   * sends back (docs/secrets.md). Optional: a server that predates it sends
   * none, and then nothing is masked.
   */
  secretValues: z.array(z.string()).optional(),
  timeoutMs: z.number().int().positive(),
  heartbeatIntervalMs: z.number().int().positive(),
  /** Grace between SIGTERM and SIGKILL on cancel. */
  cancelGraceMs: z.number().int().positive(),
  snapshot: z.object({ id: z.string(), size: z.number().int().nonnegative() }).nullable(),
  limits: RunnerLimits,
});
export type RunnerTaskSpec = z.infer<typeof RunnerTaskSpec>;

export const FencedRequest = z.object({ fence: z.number().int() });

export const StartedRequest = FencedRequest.extend({ pid: z.number().int().optional() });
export type StartedRequest = z.infer<typeof StartedRequest>;

export const LogStream = z.enum(['stdout', 'stderr', 'system']);
export type LogStream = z.infer<typeof LogStream>;
export const LogLine = z.object({
  /** 1-based, gap-free per task run; the server keeps the first copy of each seq. */
  seq: z.number().int().positive(),
  stream: LogStream,
  line: z.string(),
  ts: z.string().datetime({ offset: true }),
});
export type LogLine = z.infer<typeof LogLine>;
export const LogBatchRequest = FencedRequest.extend({ lines: z.array(LogLine).max(5000) });
export type LogBatchRequest = z.infer<typeof LogBatchRequest>;
export const LogBatchResponse = z.object({ accepted: z.number().int() });

export const OutputsRequest = FencedRequest.extend({ outputs: z.record(z.string(), z.string()) });
export type OutputsRequest = z.infer<typeof OutputsRequest>;

export const Metric = z.object({
  name: z.string().min(1),
  value: z.number(),
  tags: z.record(z.string(), z.string()).default({}),
});
export type Metric = z.infer<typeof Metric>;
export const MetricsRequest = FencedRequest.extend({ metrics: z.array(Metric).max(1000) });
export type MetricsRequest = z.infer<typeof MetricsRequest>;

export const HeartbeatRequest = FencedRequest;
export const HeartbeatResponse = z.object({ cancel: z.boolean() });
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>;

export const ResultRequest = FencedRequest.extend({
  exitCode: z.number().int().nullable(),
  /** Set when the runner stopped the task on a cancel or its own timeout. */
  stoppedBy: z.enum(['cancel', 'timeout']).nullable().default(null),
  error: z.string().max(8192).nullable().default(null),
  /**
   * Set when the runner refused the task before starting it for a reason a
   * retry cannot change (a snapshot it must not extract): the task run ends
   * with this reason and is not retried. A server that predates it ignores it.
   */
  reason: z.enum(['invalid_task']).optional(),
});
export type ResultRequest = z.infer<typeof ResultRequest>;
export const ResultResponse = z.object({ state: z.string() });

export const OkResponse = z.object({ ok: z.literal(true) });

const StreamDescriptorShape = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().nullable().optional(),
});

/**
 * A source's state object, checked only for what the store keys it by (its
 * type, and a STREAM state's stream); every other field is kept as sent.
 */
export const SyncStateObject = z
  .looseObject({
    type: SyncStateType.optional(),
    stream: z.looseObject({ stream_descriptor: StreamDescriptorShape }).optional(),
  })
  .refine((s) => s.type !== 'STREAM' || s.stream !== undefined, {
    message: 'a STREAM state needs stream.stream_descriptor',
  });

const SyncCounts = z.object({
  records: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
});

/**
 * POST sync/state: commit one source state the destination acknowledged,
 * with its ledger row, in one transaction. `sequence` is the state's number
 * in this attempt (1, 2, …; a resent one is answered `committed: false` and
 * changes nothing); `streams` the records and bytes it made durable, per
 * stream key (`namespace.name` or `name`). `message` is the SOURCE's STATE
 * message, never the destination's echo.
 */
export const CommitStateRequest = FencedRequest.extend({
  sequence: z.number().int().positive(),
  message: z.looseObject({ type: z.literal('STATE'), state: SyncStateObject }),
  streams: z.record(z.string(), SyncCounts),
});
export type CommitStateRequest = z.infer<typeof CommitStateRequest>;
export const CommitStateResponse = z.object({ committed: z.boolean() });
export type CommitStateResponse = z.infer<typeof CommitStateResponse>;
