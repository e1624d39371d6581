import { randomUUID } from 'node:crypto';
import {
  getFlowForExecution,
  insertExecution,
  readNamespaceFile,
  type ExecutionDefinition,
  type ExecutionRecord,
  type NamespaceKey,
  type Transaction,
} from '@sluice/store';
import {
  assertExecutorTypesAllowed,
  assertFlowRunnable,
  assertInputs,
  parseNamespaceConfig,
  type NamespaceConfig,
} from '@sluice/flows';
import { NotFoundError } from './errors';
import { startWaitingExecutions, type ProgressEffects } from './progress';
import type { EngineSettings } from './settings';
import { pinSnapshot } from './snapshots';

/** The flow `flowId` of the namespace `namespace` of `workspace`: a flow of another workspace cannot be named. */
export interface CreateExecutionRequest extends NamespaceKey {
  flowId: string;
  trigger?: 'api' | 'schedule' | 'subflow';
  /** The due time of a scheduled execution: at most one execution per flow and due time. */
  scheduledFor?: Date | null;
  parentTaskRunId?: string | null;
  /** Checked against the flow's `inputs` (InputsInvalidError, nothing stored); defaults are filled in. */
  inputs?: Record<string, unknown> | null;
}

async function namespaceConfigOf(tx: Transaction, ns: NamespaceKey): Promise<NamespaceConfig | null> {
  const file = await readNamespaceFile(tx, ns, 'namespace.yaml');
  if (!file) return null;
  const parsed = parseNamespaceConfig(file.toString('utf8'));
  // namespace.yaml is validated when it is written; an invalid one here predates validation.
  return parsed.ok ? parsed.config : null;
}

/**
 * Creates an execution inside the caller's transaction: pins the snapshot,
 * stores the flow as it is now, and starts it when the flow's concurrency
 * allows. Answers null when a scheduled execution for that due time exists.
 */
export async function createExecutionIn(
  tx: Transaction,
  req: CreateExecutionRequest,
  settings: EngineSettings,
  effects: ProgressEffects,
): Promise<ExecutionRecord | null> {
  const ns: NamespaceKey = { workspace: req.workspace, namespace: req.namespace };
  const flow = await getFlowForExecution(tx, ns, req.flowId);
  if (!flow) throw new NotFoundError(`flow ${req.namespace}/${req.flowId}`);
  const namespaceConfig = await namespaceConfigOf(tx, ns);
  // namespace.yaml allowed_executors (docs/decisions.md §13): a 422 before anything is stored.
  assertExecutorTypesAllowed(flow.definition, namespaceConfig, req.namespace);
  // The rest of the validator against today's namespace.yaml: it may have changed since the PUT.
  assertFlowRunnable(flow.definition, namespaceConfig, req.namespace, req.flowId);
  // Before anything is stored: a refused start leaves no execution, task run or event behind.
  const inputs = assertInputs(flow.definition.inputs, req.inputs, req.namespace, req.flowId);
  const definition: ExecutionDefinition = {
    flow: flow.definition,
    namespaceExecutor: namespaceConfig?.defaults?.executor ?? null,
  };
  const snapshot = await pinSnapshot(tx, ns, { flowId: req.flowId, source: flow.source });
  const created = await insertExecution(tx, {
    id: randomUUID(),
    ...ns,
    flowId: req.flowId,
    snapshotId: snapshot.id,
    definition,
    trigger: req.trigger ?? 'api',
    scheduledFor: req.scheduledFor ?? null,
    parentTaskRunId: req.parentTaskRunId ?? null,
    inputs,
  });
  if (created) await startWaitingExecutions(tx, ns, req.flowId, settings, effects);
  return created;
}
