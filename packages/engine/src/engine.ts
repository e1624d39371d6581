import {
  cancelQueuedTaskRuns,
  completeTaskRunWithEvent,
  emitEvent,
  EVENTS_CHANNEL,
  getExecution,
  listWaitedOnChildren,
  lockExecution,
  lockNextEvent,
  markEventProcessed,
  markExecutionCancelRequested,
  recordEventFailure,
  requestCancel,
  setExecutionState,
  watchdogSweep,
  type CompleteResult,
  type CompleteTaskRun,
  type ExecutionRecord,
  type Transaction,
} from '@sluice/store';
import { StartSubflowRequest } from '@sluice/protocol';
import { createExecutionIn, type CreateExecutionRequest } from './create-execution';
import { NotFoundError } from './errors';
import { handleEvent } from './event-handlers';
import { settleExecution, type ProgressEffects } from './progress';
import type { EngineDeps } from './settings';
import { startSubflowIn } from './subflows';
import { WakeSignal } from './wake-signal';

export type { CreateExecutionRequest } from './create-execution';

/** An event that keeps failing is parked after this many attempts (its last error stays on the row). */
const EVENT_MAX_ATTEMPTS = 20;

/**
 * The execution engine: turns flows into executions and task runs. Every
 * state change is one transaction that also writes its event (the outbox);
 * event consumers — `sluice jobs`, or a standalone server — move executions
 * along: retries, dependents, the end of an execution, subflow parents.
 */
export class Engine {
  /** Raised when task runs are queued (by this process, or relayed from PostgreSQL NOTIFY). */
  readonly workSignal = new WakeSignal();
  /** Raised when events are written (by this process, or relayed from NOTIFY). */
  readonly eventSignal = new WakeSignal();

  constructor(readonly deps: EngineDeps) {}

  private announce(effects: ProgressEffects): void {
    if (effects.queuedAny) {
      this.workSignal.notify();
      this.deps.onQueued?.();
    }
    if (effects.eventsEmitted) this.eventSignal.notify();
  }

  private async transact<T>(fn: (tx: Transaction, effects: ProgressEffects) => Promise<T>): Promise<T> {
    const effects: ProgressEffects = { queuedAny: false };
    const result = await this.deps.store.inTransaction((tx) => {
      effects.queuedAny = false;
      effects.eventsEmitted = false;
      return fn(tx, effects);
    });
    this.announce(effects);
    return result;
  }

  /** Creates an execution; null when a scheduled one for the same due time already exists. */
  async createExecution(req: CreateExecutionRequest): Promise<ExecutionRecord>;
  async createExecution(
    req: CreateExecutionRequest & { scheduledFor: Date },
  ): Promise<ExecutionRecord | null>;
  async createExecution(req: CreateExecutionRequest): Promise<ExecutionRecord | null> {
    const created = await this.transact((tx, effects) =>
      createExecutionIn(tx, req, this.deps.settings, effects),
    );
    if (!created) return null;
    this.deps.log.info('execution created', {
      executionId: created.id,
      workspace: req.workspace,
      namespace: req.namespace,
      flowId: req.flowId,
      trigger: req.trigger ?? 'api',
    });
    return (await getExecution(this.deps.store, created.id)) ?? created;
  }

  /** Cancel: queued task runs end at once, active ones (and waited-on subflows) are asked to stop. */
  async cancelExecution(executionId: string): Promise<ExecutionRecord> {
    const children = await this.transact(async (tx, effects) => {
      const execution = await lockExecution(tx, executionId);
      if (!execution) throw new NotFoundError(`execution ${executionId}`);
      if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(execution.state)) return [];
      await markExecutionCancelRequested(tx, executionId);
      if (execution.state === 'QUEUED') {
        await setExecutionState(tx, executionId, 'CANCELLED', 'cancelled');
        await emitEvent(tx, { kind: 'execution.ended', payload: { executionId } });
        effects.eventsEmitted = true;
        return [];
      }
      await cancelQueuedTaskRuns(tx, executionId);
      await requestCancel(tx, executionId);
      await settleExecution(tx, { ...execution, cancelRequested: true }, this.deps.settings, effects);
      return listWaitedOnChildren(tx, executionId);
    });
    for (const child of children) await this.cancelExecution(child);
    const after = await getExecution(this.deps.store, executionId);
    if (!after) throw new NotFoundError(`execution ${executionId}`);
    return after;
  }

  /**
   * The holder of a task run ends it (runner result, executor completion).
   * Fenced by the claim store: a stale fence throws StaleFenceError and
   * changes nothing; a repeat of the same call answers applied: false.
   */
  async finishTaskRun(req: CompleteTaskRun): Promise<CompleteResult> {
    // Only the task run row is locked (by the UPDATE): moving the execution
    // along is the event consumer's job, so completions of one wide execution
    // do not queue behind each other on the execution row.
    // One statement writes the completion and its outbox event together.
    const completed = await completeTaskRunWithEvent(this.deps.store, req, {
      kind: 'task_run.ended',
      channel: EVENTS_CHANNEL,
    });
    if (completed.applied) this.announce({ queuedAny: false, eventsEmitted: true });
    return completed;
  }

  /** One watchdog pass: task runs nobody heartbeats any more end `lost` (or `timeout`); consumers retry them. */
  async sweepLostTaskRuns(heartbeatTimeoutMs: number): Promise<number> {
    const failed = await this.transact(async (tx, effects) => {
      const rows = await watchdogSweep(tx, { heartbeatTimeoutMs, limit: 200 });
      for (const row of rows) await emitEvent(tx, { kind: 'task_run.ended', payload: { taskRunId: row.id } });
      effects.eventsEmitted = rows.length > 0;
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
    return failed.length;
  }

  /** Starts a subflow's child execution (idempotent per task run). */
  startSubflow(request: StartSubflowRequest): Promise<{ executionId: string }> {
    const req = StartSubflowRequest.parse(request);
    return this.transact((tx, effects) => startSubflowIn(tx, req, this.deps.settings, effects));
  }

  /**
   * Processes pending events, one per transaction, until none is left or
   * `limit` were handled. Safe to run in several processes at once (SKIP
   * LOCKED); a failing event is retried on later passes, then parked.
   */
  async processPendingEvents(limit = 1000): Promise<number> {
    let handled = 0;
    while (handled < limit) {
      let failedId: string | null = null;
      try {
        const did = await this.transact(async (tx, effects) => {
          const event = await lockNextEvent(tx, EVENT_MAX_ATTEMPTS);
          if (!event) return false;
          failedId = event.id;
          await handleEvent(tx, event, this.deps.settings, effects);
          await markEventProcessed(tx, event.id);
          return true;
        });
        if (!did) break;
        handled += 1;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.deps.log.error('event failed', { eventId: failedId, error: message });
        if (failedId) await recordEventFailure(this.deps.store, failedId, message);
        break;
      }
    }
    return handled;
  }

  /** Consumes events until stopped: at once when signalled, else every `pollIntervalMs`. */
  startEventConsumer(opts: { pollIntervalMs: number }): () => Promise<void> {
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        try {
          await this.processPendingEvents();
        } catch (err) {
          this.deps.log.error('event consumer pass failed', {
            error: err instanceof Error ? err.message : String(err),
          });
        }
        if (!stopped) await this.eventSignal.wait(opts.pollIntervalMs);
      }
    })();
    return async () => {
      stopped = true;
      this.eventSignal.close();
      await loop;
    };
  }
}
