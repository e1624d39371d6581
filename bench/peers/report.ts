import type { DepthResult } from './claim-depth';
import type { StoreAbResult } from './store-ab';

export interface Summary {
  /** Median jobs/s per system for each (N, C). */
  drain: { n: number; workers: number; rounds: number; jobsPerSecond: Record<string, number> }[];
  latency: { system: string; jobs: number; p50Ms: number; p95Ms: number; p99Ms: number }[];
  depth: DepthResult[];
  store: StoreAbResult[];
}

// The systems' names as they report them (SluiceSystem, GraphileSystem, PgBossSystem).
const LIMIT_1 = 'sluice (limit 1)';
const BATCH = 'sluice (batch)';
const GRAPHILE = 'graphile-worker';
const GRAPHILE_NO_LOCAL_QUEUE = 'graphile-worker (no local queue)';
const PG_BOSS = 'pg-boss';
const SYSTEMS = [LIMIT_1, BATCH, GRAPHILE, GRAPHILE_NO_LOCAL_QUEUE, PG_BOSS];

const ratio = (a: number | undefined, b: number | undefined) => (a && b ? `${(a / b).toFixed(2)}×` : '–');

/** The three tables of bench/README.md's peers section. */
export function markdown(s: Summary): string {
  const lines = [
    `| N | C | rounds | ${SYSTEMS.join(' | ')} | batch ÷ graphile | batch ÷ graphile (no local queue) | batch ÷ pg-boss | limit 1 ÷ graphile | limit 1 ÷ pg-boss |`,
    `|---:|---:|---:|${SYSTEMS.map(() => '---:').join('|')}|---:|---:|---:|---:|---:|`,
  ];
  for (const d of s.drain) {
    const j = d.jobsPerSecond;
    lines.push(
      `| ${d.n} | ${d.workers} | ${d.rounds} | ${SYSTEMS.map((x) => j[x] ?? '–').join(' | ')} | ` +
        `${ratio(j[BATCH], j[GRAPHILE])} | ${ratio(j[BATCH], j[GRAPHILE_NO_LOCAL_QUEUE])} | ${ratio(j[BATCH], j[PG_BOSS])} | ` +
        `${ratio(j[LIMIT_1], j[GRAPHILE])} | ${ratio(j[LIMIT_1], j[PG_BOSS])} |`,
    );
  }
  lines.push('', '| system | jobs | p50 ms | p95 ms | p99 ms |', '|---|---:|---:|---:|---:|');
  for (const l of s.latency) lines.push(`| ${l.system} | ${l.jobs} | ${l.p50Ms} | ${l.p95Ms} | ${l.p99Ms} |`);
  lines.push(
    '',
    '| queued rows | claim limit | claims | p50 ms | p95 ms | p99 ms |',
    '|---:|---:|---:|---:|---:|---:|',
  );
  for (const d of s.depth)
    lines.push(`| ${d.queued} | ${d.limit} | ${d.claims} | ${d.p50Ms} | ${d.p95Ms} | ${d.p99Ms} |`);
  lines.push(
    '',
    '| claim limit | jobs | before | + prepared | + batched completion | + narrow rows | + active-runs index | + claim planned once (after) | after ÷ before |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of s.store) {
    const j = r.jobsPerSecond;
    lines.push(
      `| ${r.limit} | ${r.jobs} | ${j.before} | ${j.prepared} | ${j.batched} | ${j.narrow} | ${j.index} | ${j.after} | ${r.speedup}× |`,
    );
  }
  return lines.join('\n');
}
