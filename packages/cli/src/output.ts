import type { Io } from './io';

/** Columns padded to their widest cell, kubectl-style: an upper-case header, two spaces between. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

export function printJson(io: Io, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** `2026-12-01T10:00:00.123Z` → `2026-12-01 10:00:00`; null → `-`. */
export function time(iso: string | null): string {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : '-';
}

/** From start to end (or to now while running), as `1.2s`, `3m04s`, `2h05m`. */
export function duration(start: string | null, end: string | null): string {
  if (!start) return '-';
  const ms = (end ? Date.parse(end) : Date.now()) - Date.parse(start);
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}
