// Claim latency against queue depth: the partial index task_runs_claim_idx
// (WHERE state = 'QUEUED', keyed in claim order) should make a claim cost the
// same with 1k or 100k queued rows. Times `claimTaskRuns` alone (each claimed
// run is then completed, untimed), on one connection, for limit 1 and a batch.
import { claimTaskRuns, createPool } from '@sluice/store';
import { completeTaskRun } from '../lib/completions';
import { queueTaskRuns } from '../lib/queue';
import { now, percentile, round } from './stats';

export interface DepthResult {
  queued: number;
  limit: number;
  claims: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

/** `maxClaims` per (depth, limit), fewer where the claims would take over half the queue. */
export async function claimDepth(
  url: string,
  depths: number[],
  limits: number[],
  maxClaims: number,
): Promise<DepthResult[]> {
  const results: DepthResult[] = [];
  for (const queued of depths) {
    for (const limit of limits) {
      const claims = Math.min(maxClaims, Math.floor(queued / 2 / limit));
      await queueTaskRuns(url, queued);
      const pool = createPool(url, { max: 1 });
      try {
        const ms: number[] = [];
        for (let i = 0; i < claims; i++) {
          const t0 = now();
          const runs = await claimTaskRuns(pool, {
            ownerId: 'bench',
            executorTypes: ['process'],
            pools: ['default'],
            limit,
          });
          ms.push(now() - t0);
          for (const run of runs) {
            await completeTaskRun(pool, {
              taskRunId: run.id,
              fence: run.fence,
              state: 'SUCCEEDED',
              exitCode: 0,
            });
          }
        }
        results.push({
          queued,
          limit,
          claims,
          p50Ms: round(percentile(ms, 0.5), 2),
          p95Ms: round(percentile(ms, 0.95), 2),
          p99Ms: round(percentile(ms, 0.99), 2),
        });
      } finally {
        await pool.end();
      }
    }
  }
  return results;
}
