import {
  appendClaimRecord,
  claimTaskRuns,
  claimTaskRunsRecorded,
  getClaimRecord,
  listTaskRunsHeldBy,
  type ClaimedTaskRunRow,
} from '@sluice/store';
import { ClaimRequest, type ClaimedTaskRun } from '@sluice/protocol';
import { claimOptionsFor, toClaimedTaskRun, type DirectProtocolOptions } from './direct-protocol';
import type { Engine } from './engine';

/**
 * Claims over the HTTP executor API carry an Idempotency-Key: an executor
 * whose claim answer was lost (timeout, a replica restarting) retries with the
 * same key and must get the task runs it already holds, not a second batch —
 * the first batch would otherwise sit STARTING with nobody to run it until the
 * watchdog fails it `lost`, spending an attempt.
 *
 * The first call with a key claims and records the task run ids in
 * executor_claims under (instance id, key); a repeat answers those of them the
 * instance still holds (STARTING/RUNNING, owned by it) at their current fence,
 * with freshly minted run tokens. The key decides: a repeat with a different
 * body still answers the first call's task runs. A claim that found nothing
 * leaves no row (a repeat may simply claim again: nothing was applied), so
 * idle polling does not fill the table.
 */

export interface IdempotentClaimResult {
  taskRuns: ClaimedTaskRun[];
  /** True when the key was seen before and nothing new was claimed. */
  replayed: boolean;
}

export async function claimIdempotently(
  engine: Engine,
  request: ClaimRequest,
  idempotencyKey: string,
  options: DirectProtocolOptions = {},
): Promise<IdempotentClaimResult> {
  const req = ClaimRequest.parse(request);
  if (!idempotencyKey) throw new Error('claimIdempotently: idempotencyKey must not be empty');
  const { store, settings } = engine.deps;
  const claimOptions = claimOptionsFor(req, options.k8sMaxJobs ?? 0);
  const mint = (rows: ClaimedTaskRunRow[]) =>
    Promise.all(rows.map((row) => toClaimedTaskRun(row, settings.jwtSecret)));
  const replay = async (ids: string[]): Promise<IdempotentClaimResult> => ({
    taskRuns: await mint(await listTaskRunsHeldBy(store, req.instanceId, ids)),
    replayed: true,
  });

  if (claimOptions.perPoolLimits) {
    const recorded = await getClaimRecord(store, req.instanceId, idempotencyKey);
    if (recorded) return replay(recorded);
    // The per-pool limit serialises claimers in a transaction of its own (on
    // the Store), so the record follows that transaction instead of being
    // part of it. A crash in between leaves the claimed task runs unrecorded:
    // a retry claims others, and those nobody runs are failed `lost` by the
    // watchdog after PIPELINE_HEARTBEAT_TIMEOUT and retried (one attempt
    // spent). Twins in flight at once (a retry while the first call still
    // runs) both claim; their ids are merged, so the later answer has both.
    const rows = await claimTaskRuns(store, claimOptions);
    if (rows.length === 0) return { taskRuns: [], replayed: false };
    const ids = await appendClaimRecord(
      store,
      req.instanceId,
      idempotencyKey,
      rows.map((r) => r.id),
    );
    const answer = ids.length === rows.length ? rows : await listTaskRunsHeldBy(store, req.instanceId, ids);
    return { taskRuns: await mint(answer), replayed: false };
  }

  // Claim and record in one statement, one round trip. A repeat is not looked
  // up first: repeats are rare (a lost answer), so the common call should not
  // pay for the lookup. The repeat's claim is undone by its refused record
  // (a twin still in flight is waited for) and the record answers it.
  const claimed = await claimTaskRunsRecorded(store, claimOptions, {
    instanceId: req.instanceId,
    idempotencyKey,
  });
  if (claimed) return { taskRuns: await mint(claimed), replayed: false };
  return replay((await getClaimRecord(store, req.instanceId, idempotencyKey)) ?? []);
}
