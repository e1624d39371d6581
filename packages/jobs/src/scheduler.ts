import {
  countActiveTaskRunsUpTo,
  listScheduledFlows,
  withSessionLock,
  type ScheduledFlow,
  type Store,
} from '@sluice/store';
import type { Engine } from '@sluice/engine';
import { nextDueTimes } from '@sluice/flows';
import { errorMessage, type JobsLog } from './log';
import { startPeriodic } from './periodic';

/**
 * Session advisory lock that makes one scheduler cycle run at a time across
 * every `sluice jobs` replica and standalone server on a database. (The
 * migration runner uses 72707369; this must differ.)
 */
export const SCHEDULER_ADVISORY_LOCK_KEY = 72707370;

/** Due times one flow may get in one cycle: after an outage, catch-up proceeds in steps of this. */
export const MAX_DUE_TIMES_PER_FLOW = 100;

export interface SchedulerCycleOptions {
  store: Store;
  engine: Pick<Engine, 'createExecution'>;
  /** PIPELINE_MAX_CONCURRENT_JOBS: no creation while this many task runs are queued, starting or running; 0 = no limit. */
  maxConcurrentJobs: number;
  log: JobsLog;
  /** The end of the window; defaults to the database's clock, the one clock every replica shares. */
  now?: Date;
  /** Defaults to MAX_DUE_TIMES_PER_FLOW. */
  maxDueTimesPerFlow?: number;
}

export interface SchedulerCycleResult {
  /** False when another replica held the lock, so this one did nothing. */
  ran: boolean;
  /** Executions created for due times. */
  created: number;
  /** Due times whose execution already existed (the unique index answered). */
  alreadyExisted: number;
  /** Due times left for a later cycle because the capacity limit was reached. */
  skippedForCapacity: number;
  /** Creations that failed (logged); that flow's due times are retried next cycle. */
  failed: number;
}

interface DueTime {
  flow: ScheduledFlow;
  at: Date;
}

/** workspace/namespace/flow: same-name flows of two workspaces are two flows. */
const flowKey = (f: Pick<ScheduledFlow, 'workspace' | 'namespace' | 'flowId'>) =>
  `${f.workspace}/${f.namespace}/${f.flowId}`;

function dueTimes(flows: ScheduledFlow[], now: Date, perFlow: number, log: JobsLog): DueTime[] {
  const due: DueTime[] = [];
  for (const flow of flows) {
    try {
      for (const at of nextDueTimes(flow.schedule, flow.after, now, { limit: perFlow }))
        due.push({ flow, at });
    } catch (err) {
      // Schedules are validated on save; one that no longer parses must not stop the others.
      log.warn('flow schedule skipped', {
        flow: flowKey(flow),
        schedule: flow.schedule,
        error: errorMessage(err),
      });
    }
  }
  // Oldest first across flows, so under the capacity limit no flow starves another.
  return due.sort(
    (a, b) => a.at.getTime() - b.at.getTime() || flowKey(a.flow).localeCompare(flowKey(b.flow)),
  );
}

async function createDue(
  options: SchedulerCycleOptions,
  due: DueTime[],
): Promise<Omit<SchedulerCycleResult, 'ran'>> {
  const result = { created: 0, alreadyExisted: 0, skippedForCapacity: 0, failed: 0 };
  // A flow whose creation failed gets nothing more this cycle: creating a later due time would
  // move its max(scheduled_for) past the failed one, which would then never be retried.
  const failedFlows = new Set<string>();
  for (const [index, { flow, at }] of due.entries()) {
    if (failedFlows.has(flowKey(flow))) continue;
    const limit = options.maxConcurrentJobs;
    if (limit > 0 && (await countActiveTaskRunsUpTo(options.store, limit)) >= limit) {
      result.skippedForCapacity = due.length - index;
      options.log.info('scheduler at capacity; due executions wait for the next cycle', {
        maxConcurrentJobs: limit,
        waiting: result.skippedForCapacity,
      });
      break;
    }
    try {
      // In the flow's own workspace: the scheduler runs installation-wide.
      const execution = await options.engine.createExecution({
        workspace: flow.workspace,
        namespace: flow.namespace,
        flowId: flow.flowId,
        trigger: 'schedule',
        scheduledFor: at,
      });
      if (execution) result.created += 1;
      else result.alreadyExisted += 1;
    } catch (err) {
      failedFlows.add(flowKey(flow));
      result.failed += 1;
      options.log.error('scheduled execution not created', {
        flow: flowKey(flow),
        scheduledFor: at.toISOString(),
        error: errorMessage(err),
      });
    }
  }
  return result;
}

/**
 * One scheduler cycle: every flow with a schedule gets an execution for each
 * due time since its latest scheduled execution (or since it was saved), up
 * to now, while the capacity limit allows. Only the replica holding the
 * advisory lock runs it; the others answer `ran: false`. The unique index on
 * (workspace, namespace, flow_id, scheduled_for) is what guarantees one execution per
 * due time, even if two cycles ever raced; the lock only spares the work.
 */
export async function runSchedulerCycle(options: SchedulerCycleOptions): Promise<SchedulerCycleResult> {
  const idle = { created: 0, alreadyExisted: 0, skippedForCapacity: 0, failed: 0 };
  const cycle = await withSessionLock(options.store, SCHEDULER_ADVISORY_LOCK_KEY, async () => {
    const { flows, dbNow } = await listScheduledFlows(options.store);
    const due = dueTimes(
      flows,
      options.now ?? dbNow,
      options.maxDueTimesPerFlow ?? MAX_DUE_TIMES_PER_FLOW,
      options.log,
    );
    return createDue(options, due);
  });
  return cycle.locked ? { ran: true, ...cycle.value } : { ran: false, ...idle };
}

export interface SchedulerOptions extends Omit<SchedulerCycleOptions, 'now'> {
  /** PIPELINE_JOB_SCHEDULER_INTERVAL */
  intervalMs: number;
  /** Called after every cycle this replica ran (metrics, tests). */
  onCycle?: (result: SchedulerCycleResult) => void;
}

/** Runs a scheduler cycle every interval (the first one right away); stop() waits for a cycle in flight. */
export function startScheduler(options: SchedulerOptions): () => Promise<void> {
  return startPeriodic({
    name: 'scheduler',
    intervalMs: options.intervalMs,
    firstDelayMs: 0,
    log: options.log,
    run: async () => {
      const result = await runSchedulerCycle(options);
      if (result.ran) options.onCycle?.(result);
      if (result.created > 0 || result.failed > 0) options.log.info('scheduler cycle', { ...result });
    },
  });
}
