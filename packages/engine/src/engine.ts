import { randomUUID } from 'node:crypto';
import {
  cancelQueuedTaskRuns,
  completeTaskRun,
  getTaskRun,
  requestCancel,
  watchdogSweep,
  type CompleteResult,
  type CompleteTaskRun,
} from '@sluice/claim-store';
import { parseNamespaceConfig, type ExecutorBlock, type Flow } from '@sluice/flows';
import { NotFoundError } from './errors';
import type { ExecutionDefinition } from './definition';
import { afterTaskRunEnded, settleExecution, startWaitingExecutions, type ProgressEffects } from './progress';
import type { EngineDeps } from './settings';
import { pinSnapshot } from './snapshots';
import {
  getExecution,
  insertExecution,
  lockExecution,
  markExecutionCancelRequested,
  setExecutionState,
  type ExecutionRecord,
} from './sql/executions';
import { inTransaction } from './transactions';

export interface CreateExecutionRequest {
  namespace: string;
  flowId: string;
  trigger?: 'api' | 'schedule' | 'subflow';
  scheduledFor?: Date | null;
}

/**
 * The execution engine: turns flows into executions and task runs, and moves
 * them along as task runs end. Every state change is one transaction that
 * locks the execution row first, so dependents are queued exactly once.
 */
export class Engine {
  constructor(readonly deps: EngineDeps) {}

  private announce(effects: ProgressEffects): void {
    if (effects.queuedAny) this.deps.onQueued?.();
  }

  async createExecution(req: CreateExecutionRequest): Promise<ExecutionRecord> {
    const { pool, settings } = this.deps;
    const flowRow = await pool.query<{ source: string; definition: Flow }>(
      'SELECT source, definition FROM flows WHERE namespace = $1 AND flow_id = $2',
      [req.namespace, req.flowId],
    );
    const flow = flowRow.rows[0];
    if (!flow) throw new NotFoundError(`flow ${req.namespace}/${req.flowId}`);
    const namespaceExecutor = await this.namespaceExecutorDefaults(req.namespace);
    const definition: ExecutionDefinition = { flow: flow.definition, namespaceExecutor };
    const effects: ProgressEffects = { queuedAny: false };
    const execution = await inTransaction(pool, async (tx) => {
      const snapshot = await pinSnapshot(tx, req.namespace, { flowId: req.flowId, source: flow.source });
      const created = await insertExecution(tx, {
        id: randomUUID(),
        namespace: req.namespace,
        flowId: req.flowId,
        snapshotId: snapshot.id,
        definition,
        trigger: req.trigger ?? 'api',
        scheduledFor: req.scheduledFor ?? null,
      });
      await startWaitingExecutions(tx, req.namespace, req.flowId, settings, effects);
      return created;
    });
    this.announce(effects);
    this.deps.log.info('execution created', {
      executionId: execution.id,
      namespace: req.namespace,
      flowId: req.flowId,
    });
    return (await getExecution(pool, execution.id)) ?? execution;
  }

  private async namespaceExecutorDefaults(namespace: string): Promise<ExecutorBlock | null> {
    const r = await this.deps.pool.query<{ content: Buffer }>(
      `SELECT content FROM namespace_files WHERE namespace = $1 AND path = 'namespace.yaml'`,
      [namespace],
    );
    const file = r.rows[0];
    if (!file) return null;
    const parsed = parseNamespaceConfig(file.content.toString('utf8'));
    // namespace.yaml is validated when it is written; an invalid one here means it predates validation.
    return parsed.ok ? (parsed.config.defaults?.executor ?? null) : null;
  }

  /** Cancel: queued task runs end at once, active ones are asked to stop; the execution ends when none is left. */
  async cancelExecution(executionId: string): Promise<ExecutionRecord> {
    const { pool, settings } = this.deps;
    const effects: ProgressEffects = { queuedAny: false };
    await inTransaction(pool, async (tx) => {
      const execution = await lockExecution(tx, executionId);
      if (!execution) throw new NotFoundError(`execution ${executionId}`);
      if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(execution.state)) return;
      await markExecutionCancelRequested(tx, executionId);
      if (execution.state === 'QUEUED') {
        await setExecutionState(tx, executionId, 'CANCELLED', 'cancelled');
        return;
      }
      await cancelQueuedTaskRuns(tx, executionId);
      await requestCancel(tx, executionId);
      await settleExecution(tx, { ...execution, cancelRequested: true }, settings, effects);
    });
    this.announce(effects);
    const after = await getExecution(pool, executionId);
    if (!after) throw new NotFoundError(`execution ${executionId}`);
    return after;
  }

  /**
   * The holder of a task run ends it (runner result, executor completion).
   * Fenced by the claim store: a stale fence throws StaleFenceError and
   * changes nothing; a repeat of the same call answers applied: false.
   */
  async finishTaskRun(req: CompleteTaskRun): Promise<CompleteResult> {
    const { pool, settings } = this.deps;
    const current = await getTaskRun(pool, req.taskRunId);
    if (!current) throw new NotFoundError(`task run ${req.taskRunId}`);
    const effects: ProgressEffects = { queuedAny: false };
    const result = await inTransaction(pool, async (tx) => {
      await lockExecution(tx, current.executionId);
      const completed = await completeTaskRun(tx, req);
      if (completed.applied) await afterTaskRunEnded(tx, completed.row, settings, effects);
      return completed;
    });
    this.announce(effects);
    return result;
  }

  /** One watchdog pass: task runs nobody heartbeats any more end `lost` (or `timeout`) and are retried. */
  async sweepLostTaskRuns(heartbeatTimeoutMs: number): Promise<number> {
    const { pool, settings } = this.deps;
    const effects: ProgressEffects = { queuedAny: false };
    const failed = await inTransaction(pool, async (tx) => {
      const rows = await watchdogSweep(tx, { heartbeatTimeoutMs, limit: 200 });
      for (const row of rows) await afterTaskRunEnded(tx, row, settings, effects);
      return rows;
    });
    for (const row of failed) {
      this.deps.log.warn('task run failed by the watchdog', {
        taskRunId: row.id,
        executionId: row.executionId,
        reason: row.reason,
        ownerId: row.ownerId,
      });
    }
    this.announce(effects);
    return failed.length;
  }

  /** Runs the watchdog every interval until the returned stop function is called. */
  startWatchdog(opts: {
    intervalMs: number;
    heartbeatTimeoutMs: number;
    onFailed?: (n: number) => void;
  }): () => void {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const tick = async (): Promise<void> => {
      try {
        const n = await this.sweepLostTaskRuns(opts.heartbeatTimeoutMs);
        if (n > 0) opts.onFailed?.(n);
      } catch (err) {
        this.deps.log.error('watchdog pass failed', {
          error: err instanceof Error ? err.message : String(err),
        });
      }
      if (!stopped) timer = setTimeout(() => void tick(), opts.intervalMs);
    };
    timer = setTimeout(() => void tick(), opts.intervalMs);
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }
}
