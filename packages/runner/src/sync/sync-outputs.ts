import type { CountsByStream } from '@sluice/connector-protocol';

/**
 * The outputs of a sync attempt (strings, as every task's): records and
 * bytes emitted (forwarded to the destination) and committed (their state
 * acknowledged and saved), in all and per stream, and the ledger rows written.
 */
export function syncOutputs(
  emitted: CountsByStream,
  committed: CountsByStream,
  commits: number,
): Record<string, string> {
  const sum = (counts: CountsByStream, field: 'records' | 'bytes') =>
    Object.values(counts).reduce((n, c) => n + c[field], 0);
  const streams: Record<
    string,
    { emitted: number; committed: number; emitted_bytes: number; committed_bytes: number }
  > = {};
  for (const key of new Set([...Object.keys(emitted), ...Object.keys(committed)])) {
    streams[key] = {
      emitted: emitted[key]?.records ?? 0,
      committed: committed[key]?.records ?? 0,
      emitted_bytes: emitted[key]?.bytes ?? 0,
      committed_bytes: committed[key]?.bytes ?? 0,
    };
  }
  return {
    records_emitted: String(sum(emitted, 'records')),
    bytes_emitted: String(sum(emitted, 'bytes')),
    records_committed: String(sum(committed, 'records')),
    bytes_committed: String(sum(committed, 'bytes')),
    states_committed: String(commits),
    streams: JSON.stringify(streams),
  };
}
