import type { Pool } from 'pg';
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
  pool: Pool;
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

interface ScheduledFlow {
  namespace: string;
  flowId: string;
  schedule: string;
  /** max(latest scheduled_for, updated_at): due times strictly after this are owed. */
  after: Date;
}

interface DueTime {
  flow: ScheduledFlow;
  at: Date;
}

const flowKey = (f: Pick<ScheduledFlow, 'namespace' | 'flowId'>) => `${f.namespace}/${f.flowId}`;

async function scheduledFlows(pool: Pool): Promise<{ flows: ScheduledFlow[]; dbNow: Date }> {
  // GREATEST ignores NULL: a flow that never ran is owed the due times since it was saved.
  // max(scheduled_for) per flow is an index lookup (executions_namespace_flow_id_scheduled_for_key).
  const r = await pool.query<ScheduledFlow & { dbNow: Date }>(
    `SELECT f.namespace, f.flow_id AS "flowId", f.schedule, now() AS "dbNow",
            GREATEST(f.updated_at,
                     (SELECT max(e.scheduled_for) FROM executions e
                      WHERE e.namespace = f.namespace AND e.flow_id = f.flow_id)) AS after
     FROM flows f
     WHERE f.schedule IS NOT NULL AND btrim(f.schedule) <> ''
     ORDER BY f.namespace, f.flow_id`,
  );
  const dbNow = r.rows[0]?.dbNow ?? new Date();
  return { flows: r.rows.map(({ dbNow: _ignored, ...flow }) => flow), dbNow };
}

/** Task runs that count against PIPELINE_MAX_CONCURRENT_JOBS, counted only up to `limit` (cheap with a big backlog). */
async function activeTaskRuns(pool: Pool, limit: number): Promise<number> {
  const r = await pool.query<{ n: number }>(
    // Two counts, each matching one partial index (task_runs_claim_idx,
    // task_runs_active_idx): one IN over all three states matches neither
    // and would scan the whole history.
    `SELECT least($1::int,
              (SELECT count(*) FROM (SELECT 1 FROM task_runs WHERE state = 'QUEUED' LIMIT $1) q)
            + (SELECT count(*) FROM (SELECT 1 FROM task_runs WHERE state IN ('STARTING', 'RUNNING') LIMIT $1) a)
           )::int AS n`,
    [limit],
  );
  return r.rows[0]?.n ?? 0;
}

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
    if (limit > 0 && (await activeTaskRuns(options.pool, limit)) >= limit) {
      result.skippedForCapacity = due.length - index;
      options.log.info('scheduler at capacity; due executions wait for the next cycle', {
        maxConcurrentJobs: limit,
        waiting: result.skippedForCapacity,
      });
      break;
    }
    try {
      const execution = await options.engine.createExecution({
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
 * (namespace, flow_id, scheduled_for) is what guarantees one execution per
 * due time, even if two cycles ever raced; the lock only spares the work.
 */
export async function runSchedulerCycle(options: SchedulerCycleOptions): Promise<SchedulerCycleResult> {
  const idle = { created: 0, alreadyExisted: 0, skippedForCapacity: 0, failed: 0 };
  const client = await options.pool.connect();
  let broken: Error | undefined;
  try {
    const lock = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      SCHEDULER_ADVISORY_LOCK_KEY,
    ]);
    if (!lock.rows[0]?.locked) return { ran: false, ...idle };
    try {
      const { flows, dbNow } = await scheduledFlows(options.pool);
      const due = dueTimes(
        flows,
        options.now ?? dbNow,
        options.maxDueTimesPerFlow ?? MAX_DUE_TIMES_PER_FLOW,
        options.log,
      );
      return { ran: true, ...(await createDue(options, due)) };
    } finally {
      // A session lock outlives the cycle unless released; if the unlock itself fails the
      // connection is suspect, so it is destroyed (which also drops the lock).
      await client
        .query('SELECT pg_advisory_unlock($1)', [SCHEDULER_ADVISORY_LOCK_KEY])
        .catch((err: unknown) => {
          broken = err instanceof Error ? err : new Error(String(err));
        });
    }
  } finally {
    client.release(broken);
  }
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
