import { z } from 'zod';
import { ExecutionState, ExecutorType, LogLine, TaskRunReason, TaskRunState } from '@sluice/protocol';
import { Name, NextCursor, PageQuery } from './common';
import { named, Timestamp } from './registry';

export const ExecutionStart = named(
  'ExecutionStart',
  z
    .object({
      inputs: z
        .record(z.string(), z.unknown())
        .optional()
        .describe(
          'Input name → value, checked against the flow\u2019s `inputs` (docs/flow-file.md#inputs): a value of the declared type or its text ("5", "true", an object\u2019s JSON). Defaults fill in the rest.',
        ),
    })
    .strict(),
  'The body of an execution start; it may be left out when the flow needs no inputs.',
);

export const ExecutionCreated = named('ExecutionCreated', z.object({ id: z.uuid(), state: ExecutionState }));

export const ExecutionCancelRequested = named(
  'ExecutionCancelRequested',
  z.object({ id: z.uuid(), state: ExecutionState, cancelRequested: z.literal(true) }),
);

export const TaskRun = named(
  'TaskRun',
  z.object({
    id: z.uuid(),
    taskId: z.string(),
    attempt: z.number().int(),
    state: TaskRunState,
    reason: TaskRunReason.nullable(),
    executor: z.object({ type: ExecutorType, pool: z.string(), image: z.string().nullable() }),
    externalRef: z.string().nullable(),
    ownerId: z.string().nullable(),
    exitCode: z.number().int().nullable(),
    error: z.string().nullable(),
    outputs: z.record(z.string(), z.string()).optional().describe('Only once the task run SUCCEEDED.'),
    createdAt: Timestamp,
    startedAt: Timestamp.nullable(),
    endedAt: Timestamp.nullable(),
  }),
  'One attempt of one task. `reason` `no_instance_for_pool`: queued, and no online instance serves its executor type and pool.',
);

const executionFields = {
  id: z.uuid(),
  workspace: z.string(),
  namespace: z.string(),
  flowId: z.string(),
  state: ExecutionState,
  reason: z.string().nullable(),
  trigger: z.string().describe('api, schedule or subflow'),
  inputs: z
    .record(z.string(), z.unknown())
    .describe('The inputs it runs with, defaults included, converted to their declared types.'),
  cancelRequested: z.boolean(),
  createdAt: Timestamp,
  startedAt: Timestamp.nullable(),
  endedAt: Timestamp.nullable(),
};

export const Execution = named(
  'Execution',
  z.object({ ...executionFields, snapshotId: z.string().nullable(), taskRuns: z.array(TaskRun) }),
);

export const ExecutionSummary = named('ExecutionSummary', z.object(executionFields));

export const ExecutionList = named(
  'ExecutionList',
  z.object({ executions: z.array(ExecutionSummary), nextCursor: NextCursor }),
  'Newest first (created_at, then id).',
);

export const TaskRunList = named(
  'TaskRunList',
  z.object({ taskRuns: z.array(TaskRun) }),
  'In the order the tasks were queued, attempts of one task together.',
);

/** GET /executions: filters, then the page. Unknown parameters are refused (a typo would widen the list). */
export const ExecutionListQuery = PageQuery.extend({
  namespace: Name.optional().describe('Only executions of this namespace.'),
  flow: Name.optional().describe('Only executions of this flow; needs `namespace`.'),
  state: ExecutionState.optional(),
  createdAfter: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('Only executions created at or after this time.'),
  createdBefore: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('Only executions created before this time.'),
}).strict();

export const LogLineView = named(
  'LogLine',
  LogLine.extend({ ts: Timestamp }),
  'One line a task run wrote; `seq` is 1-based and gap-free per task run.',
);

export const LogPage = named(
  'LogPage',
  z.object({
    taskRunId: z.uuid(),
    state: TaskRunState,
    lines: z.array(LogLineView),
    next: z.number().int().describe('Pass as `after` for the lines after these.'),
  }),
);

export const MetricList = named(
  'MetricList',
  z.object({
    metrics: z.array(
      z.object({
        name: z.string(),
        value: z.number(),
        tags: z.record(z.string(), z.string()),
        ts: Timestamp,
      }),
    ),
  }),
  'The metrics a task run reported ($SLUICE_METRICS), in the order received.',
);

export const ArtifactList = named(
  'ArtifactList',
  z.object({
    artifacts: z.array(z.object({ name: z.string(), size: z.number().int(), createdAt: Timestamp })),
  }),
);
