import { Pool } from 'pg';
import type { ExecutorType } from '@sluice/protocol';
import { connectionOf, query, withTransaction, type Queryable } from '../handle';
import {
  CLAIMED_TASK_RUN_COLUMNS,
  qualifiedColumns,
  toClaimedTaskRunRow,
  type ClaimedTaskRunRow,
} from '../rows';

export interface PerPoolLimit {
  executorType: ExecutorType;
  pool: string;
  /** Most STARTING/RUNNING task runs of this (executor type, pool) over all instances; 0 = no cap. */
  maxActive: number;
}

export interface ClaimOptions {
  /** The claiming instance's owner ID, stored on each claimed task run. */
  ownerId: string;
  executorTypes: ExecutorType[];
  /** Pools the instance serves; inline task runs (pool '') are claimable regardless. */
  pools: string[];
  limit: number;
  /** The kubernetes cap (SLUICE_K8S_MAX_JOBS): enforced inside the claim, see claimWithPoolLimits. */
  perPoolLimits?: PerPoolLimit[];
}

// One statement: the CTE picks the oldest claimable rows and locks them,
// skipping rows another claimer holds (so N claimers never wait on each other
// nor take one row twice), and the UPDATE turns them into claims.
// `state = 'QUEUED'` is written literally so the planner can match the partial
// index task_runs_claim_idx; its key order equals the ORDER BY, so the scan
// stops after the limit instead of sorting the whole backlog. The claim bumps
// the fence: every later write of the holder carries it. It clears a waiting
// reason such as no_instance_for_pool.
// The claim answers only the columns a claimer needs (ClaimedTaskRunRow), in
// claim order (UPDATE ... RETURNING keeps no order, so the outer SELECT sorts):
// whole rows cost more to ship and parse than the claim costs to run.
// Sent as a named (prepared) statement: instances run it on every poll, slot
// release and wake-up, and preparing it once per connection skips the parse
// of each later call (bench/README.md, peers: before/after). The limit is
// written into the text, one statement per limit (limits are free slots, so
// a connection holds a few): with `LIMIT $4` PostgreSQL's generic plan
// assumes a tenth of the queue is taken, hash-joins a scan of all of
// task_runs for the UPDATE and costs so much more than a custom plan that
// every call was planned anew (≈0.3 ms; measured with pg_prepared_statements:
// 0 generic plans in 600 claims). With the limit known the generic plan is
// the custom one — an ordered scan of task_runs_claim_idx that stops at the
// limit, rows updated by primary key — and is used from the sixth call on.

/** The UPDATE that turns the rows of CTE `picked` into claims, as CTE `claimed`. */
function claimedCte(picked: string): string {
  return `claimed AS (
  UPDATE task_runs t
  SET state = 'STARTING', fence = t.fence + 1, owner_id = $1, claimed_at = now(), heartbeat_at = now(), reason = NULL
  FROM ${picked} c
  WHERE t.id = c.id
  RETURNING ${qualifiedColumns(CLAIMED_TASK_RUN_COLUMNS, 't')}, t.available_at, t.created_at
)`;
}

/** Every claim statement's answer: the claimed rows in claim order. */
const CLAIM_ANSWER = `SELECT ${CLAIMED_TASK_RUN_COLUMNS} FROM claimed ORDER BY available_at, created_at, id`;

/** The end of both claim statements: turn the rows of CTE `picked` into claims and answer them in claim order. */
function claimRows(picked: string): string {
  return `${claimedCte(picked)}
${CLAIM_ANSWER}`;
}

/** The oldest claimable rows, at most `limit`, locked: CTE `candidates`; $2 executor types, $3 pools. */
function candidatesCte(limit: number): string {
  return `candidates AS (
  SELECT id FROM task_runs
  WHERE state = 'QUEUED'
    AND available_at <= now()
    AND executor_type = ANY($2::text[])
    AND (executor_type = 'inline' OR pool = ANY($3::text[]))
  ORDER BY available_at, created_at, id
  LIMIT ${limit}
  FOR UPDATE SKIP LOCKED
)`;
}

/** The claim of at most `limit` rows; $1 owner ID, $2 executor types, $3 pools. */
export function claimTaskRunsSql(limit: number): string {
  assertClaimLimit(limit);
  return `
WITH ${candidatesCte(limit)},
${claimRows('candidates')}`;
}

// The claim and its idempotency record (executor_claims, see
// claimTaskRunsRecorded) in one statement: $4 instance ID, $5 idempotency key.
// The record is a plain INSERT: when the key is already recorded it fails with
// a unique violation, and the statement's claim is undone with it. A claim
// that found nothing records nothing (HAVING), so idle polling adds no rows.
// Prepared per limit for the reason given at the top.
export function recordedClaimSql(limit: number): string {
  assertClaimLimit(limit);
  return `
WITH ${candidatesCte(limit)},
${claimedCte('candidates')},
recorded AS (
  INSERT INTO executor_claims (instance_id, idempotency_key, task_run_ids)
  SELECT $4, $5, array_agg(id) FROM claimed HAVING count(*) > 0
)
${CLAIM_ANSWER}`;
}

function assertClaimLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new Error(`claimTaskRuns: limit must be a positive integer, got ${limit}`);
  }
}

// As claimTaskRunsSql, but rows of a (type, pool) already at its cap are not
// candidates, and of the rest at most (cap - active) per (type, pool) are
// taken. $5..$7 are the parallel arrays of the limits.
const CLAIM_LIMITED_SQL = `
WITH limits AS (
  SELECT * FROM unnest($5::text[], $6::text[], $7::int[]) AS l(executor_type, pool, max_active)
),
room AS (
  SELECT l.executor_type, l.pool,
         l.max_active - (SELECT count(*) FROM task_runs a
                         WHERE a.state IN ('STARTING', 'RUNNING')
                           AND a.executor_type = l.executor_type AND a.pool = l.pool) AS free
  FROM limits l
),
candidates AS (
  SELECT id, executor_type, pool, available_at, created_at FROM task_runs
  WHERE state = 'QUEUED'
    AND available_at <= now()
    AND executor_type = ANY($2::text[])
    AND (executor_type = 'inline' OR pool = ANY($3::text[]))
    AND (executor_type, pool) NOT IN (SELECT executor_type, pool FROM room WHERE free <= 0)
  ORDER BY available_at, created_at, id
  LIMIT $4
  FOR UPDATE SKIP LOCKED
),
allowed AS (
  SELECT c.id FROM (
    SELECT c.*, row_number() OVER (PARTITION BY c.executor_type, c.pool
                                   ORDER BY c.available_at, c.created_at, c.id) AS rn
    FROM candidates c
  ) c
  LEFT JOIN room r ON r.executor_type = c.executor_type AND r.pool = c.pool
  WHERE r.free IS NULL OR c.rn <= r.free
),
${claimRows('allowed')}`;

/** Claims up to `limit` queued task runs for `ownerId`, oldest first. */
export async function claimTaskRuns(db: Queryable, opts: ClaimOptions): Promise<ClaimedTaskRunRow[]> {
  assertClaimLimit(opts.limit);
  if (opts.executorTypes.length === 0) return [];
  const limits = opts.perPoolLimits?.filter((l) => l.maxActive > 0) ?? [];
  if (limits.length === 0) {
    const { rows } = await query(db, {
      name: `sluice_claim_task_runs_${opts.limit}`,
      text: claimTaskRunsSql(opts.limit),
      values: [opts.ownerId, opts.executorTypes, opts.pools],
    });
    return rows.map(toClaimedTaskRunRow);
  }
  return claimWithPoolLimits(db, [opts.ownerId, opts.executorTypes, opts.pools, opts.limit], limits);
}

/** Where claimTaskRunsRecorded records what it claimed. */
export interface ClaimRecord {
  /** The claiming instance (executor_claims.instance_id). */
  instanceId: string;
  /** The claim call's Idempotency-Key. */
  idempotencyKey: string;
}

/**
 * claimTaskRuns (without perPoolLimits) that records the claimed ids in
 * executor_claims under `record`, in the same statement: one round trip, and
 * the claim exists exactly when its record does. Answers null, claiming
 * nothing, when `record` is already there (a repeated call: the caller answers
 * from the record). A twin in flight with the same key waits for this one's
 * commit, then gets null. Run it outside a transaction: the refused record
 * ends the statement with an error, which would abort one.
 */
export async function claimTaskRunsRecorded(
  db: Queryable,
  opts: Omit<ClaimOptions, 'perPoolLimits'>,
  record: ClaimRecord,
): Promise<ClaimedTaskRunRow[] | null> {
  assertClaimLimit(opts.limit);
  if (opts.executorTypes.length === 0) return [];
  try {
    const { rows } = await query(db, {
      name: `sluice_claim_task_runs_recorded_${opts.limit}`,
      text: recordedClaimSql(opts.limit),
      values: [opts.ownerId, opts.executorTypes, opts.pools, record.instanceId, record.idempotencyKey],
    });
    return rows.map(toClaimedTaskRunRow);
  } catch (err) {
    if (isRecordTaken(err)) return null;
    throw err;
  }
}

function isRecordTaken(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && e.constraint === 'executor_claims_pkey';
}

/**
 * A cap over all instances needs the count of active task runs to be current
 * when the claim decides. Within one statement that count comes from the
 * statement's snapshot, so two claimers at once could both see room for the
 * last slot. Hence: take a transaction-scoped advisory lock per limited pool
 * (in a fixed order, so two claimers cannot deadlock), then run the claim in a
 * new statement, whose snapshot includes every earlier claim. Kubernetes
 * claims once per K8S_EXECUTOR_JOB_WORKER_INTERVAL, so the serialisation
 * costs nothing there. Needs its own transaction, hence a Pool.
 */
async function claimWithPoolLimits(
  db: Queryable,
  params: unknown[],
  limits: PerPoolLimit[],
): Promise<ClaimedTaskRunRow[]> {
  const pool = connectionOf(db);
  if (!(pool instanceof Pool)) {
    throw new Error(
      'claimTaskRuns: perPoolLimits needs a Pool or a Store (the claim runs in its own transaction)',
    );
  }
  const sorted = [...limits].sort((a, b) =>
    `${a.executorType}\u0000${a.pool}` < `${b.executorType}\u0000${b.pool}` ? -1 : 1,
  );
  return withTransaction(pool, async (tx) => {
    for (const l of sorted) {
      await query(tx, "SELECT pg_advisory_xact_lock(hashtext('sluice.claim'), hashtext($1 || '/' || $2))", [
        l.executorType,
        l.pool,
      ]);
    }
    const { rows } = await query(tx, CLAIM_LIMITED_SQL, [
      ...params,
      sorted.map((l) => l.executorType),
      sorted.map((l) => l.pool),
      sorted.map((l) => l.maxActive),
    ]);
    return rows.map(toClaimedTaskRunRow);
  });
}
