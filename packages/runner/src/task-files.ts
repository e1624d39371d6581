import { readFile, stat } from 'node:fs/promises';
import { Metric } from '@sluice/protocol';

/** A file the task wrote that is larger than this is ignored, so a runaway task cannot exhaust the runner. */
export const TASK_FILE_MAX_BYTES = 16 * 1024 * 1024;

export interface Parsed<T> {
  value: T;
  /** One message per rejected line, for the task's log (never the rejected value itself). */
  problems: string[];
}

/**
 * Reads $SLUICE_OUTPUTS: `key=value` lines; blank lines and `#` comments are
 * skipped, the last value of a key wins, a value over `maxValueBytes` is rejected.
 */
export async function readOutputs(
  file: string,
  maxValueBytes: number,
): Promise<Parsed<Record<string, string>>> {
  const outputs: Record<string, string> = {};
  const problems: string[] = [];
  const lines = await readLines(file, 'outputs', problems);
  lines.forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const where = `outputs line ${index + 1}`;
    const eq = line.indexOf('=');
    const key = eq === -1 ? '' : line.slice(0, eq).trim();
    if (eq === -1 || key === '' || /\s/.test(key)) {
      problems.push(`${where} ignored: expected key=value`);
      return;
    }
    const value = line.slice(eq + 1);
    const size = Buffer.byteLength(value);
    if (size > maxValueBytes) {
      problems.push(`output ${key} rejected: its value is ${size} bytes, over the limit of ${maxValueBytes}`);
      return;
    }
    outputs[key] = value;
  });
  return { value: outputs, problems };
}

/** Reads $SLUICE_METRICS: one JSON object per line, `{"name","value","tags"}`. */
export async function readMetrics(file: string): Promise<Parsed<Metric[]>> {
  const metrics: Metric[] = [];
  const problems: string[] = [];
  const lines = await readLines(file, 'metrics', problems);
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    const where = `metrics line ${index + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      problems.push(`${where} ignored: not JSON`);
      return;
    }
    const parsed = Metric.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push(
        `${where} ignored: ${issue ? `${issue.path.join('.') || 'line'}: ${issue.message}` : 'invalid'}`,
      );
      return;
    }
    metrics.push(parsed.data);
  });
  return { value: metrics, problems };
}

async function readLines(file: string, what: string, problems: string[]): Promise<string[]> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    return []; // the task removed it: nothing to report
  }
  if (size > TASK_FILE_MAX_BYTES) {
    problems.push(`${what} file ignored: ${size} bytes is over the limit of ${TASK_FILE_MAX_BYTES}`);
    return [];
  }
  return (await readFile(file, 'utf8')).split('\n');
}
