import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { parseNamespaceConfig, type ExecutorBlock, type Flow } from '@sluice/flows';
import type { ExecutionDefinition } from './definition';
import { NotFoundError } from './errors';
import { startWaitingExecutions, type ProgressEffects } from './progress';
import type { EngineSettings } from './settings';
import { pinSnapshot } from './snapshots';
import { insertExecution, type ExecutionRecord } from './sql/executions';

export interface CreateExecutionRequest {
  namespace: string;
  flowId: string;
  trigger?: 'api' | 'schedule' | 'subflow';
  /** The due time of a scheduled execution: at most one execution per flow and due time. */
  scheduledFor?: Date | null;
  parentTaskRunId?: string | null;
  inputs?: Record<string, unknown> | null;
}

async function namespaceExecutorDefaults(tx: PoolClient, namespace: string): Promise<ExecutorBlock | null> {
  const r = await tx.query<{ content: Buffer }>(
    `SELECT content FROM namespace_files WHERE namespace = $1 AND path = 'namespace.yaml'`,
    [namespace],
  );
  const file = r.rows[0];
  if (!file) return null;
  const parsed = parseNamespaceConfig(file.content.toString('utf8'));
  // namespace.yaml is validated when it is written; an invalid one here predates validation.
  return parsed.ok ? (parsed.config.defaults?.executor ?? null) : null;
}

/**
 * Creates an execution inside the caller's transaction: pins the snapshot,
 * stores the flow as it is now, and starts it when the flow's concurrency
 * allows. Answers null when a scheduled execution for that due time exists.
 */
export async function createExecutionIn(
  tx: PoolClient,
  req: CreateExecutionRequest,
  settings: EngineSettings,
  effects: ProgressEffects,
): Promise<ExecutionRecord | null> {
  const flowRow = await tx.query<{ source: string; definition: Flow }>(
    'SELECT source, definition FROM flows WHERE namespace = $1 AND flow_id = $2',
    [req.namespace, req.flowId],
  );
  const flow = flowRow.rows[0];
  if (!flow) throw new NotFoundError(`flow ${req.namespace}/${req.flowId}`);
  const definition: ExecutionDefinition = {
    flow: flow.definition,
    namespaceExecutor: await namespaceExecutorDefaults(tx, req.namespace),
  };
  const snapshot = await pinSnapshot(tx, req.namespace, { flowId: req.flowId, source: flow.source });
  const created = await insertExecution(tx, {
    id: randomUUID(),
    namespace: req.namespace,
    flowId: req.flowId,
    snapshotId: snapshot.id,
    definition,
    trigger: req.trigger ?? 'api',
    scheduledFor: req.scheduledFor ?? null,
    parentTaskRunId: req.parentTaskRunId ?? null,
    inputs: req.inputs ?? null,
  });
  if (created) await startWaitingExecutions(tx, req.namespace, req.flowId, settings, effects);
  return created;
}
