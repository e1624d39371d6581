import { spawn } from 'node:child_process';
import { ConnectorOutputParser, type ParsedLine } from '@sluice/connector-protocol';

export interface ConnectorRun {
  lines: ParsedLine[];
  stderr: string[];
  exit: { code: number | null; signal: string | null };
  /** Stopped by the runner: the record limit was reached, or the time limit. */
  stoppedBy: 'limit' | 'timeout' | null;
}

export interface RunConnectorOptions {
  argv: readonly [string, ...string[]];
  /** Lines written to its stdin (a destination's input), then end of input. */
  input?: readonly string[];
  timeoutMs: number;
  /** Stop it (SIGTERM) once it has printed this many RECORD messages. */
  maxRecords?: number;
}

/**
 * Runs one operation of a connector for `sluice connector test` and keeps
 * everything it printed, parsed. Not the sync's hot path: a conformance run
 * is short, so its lines are held in memory.
 */
export function runConnector(options: RunConnectorOptions): Promise<ConnectorRun> {
  const [file, ...args] = options.argv;
  const child = spawn(file, args, { stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  const parser = new ConnectorOutputParser();
  const lines: ParsedLine[] = [];
  const stderr: string[] = [];
  let records = 0;
  let stoppedBy: ConnectorRun['stoppedBy'] = null;
  const stop = (why: 'limit' | 'timeout') => {
    if (stoppedBy) return;
    stoppedBy = why;
    child.kill('SIGTERM');
  };
  const timer = setTimeout(() => stop('timeout'), options.timeoutMs);
  child.stdout!.on('data', (chunk: Buffer) => {
    for (const line of parser.push(chunk)) {
      lines.push(line);
      if (line.kind === 'message' && line.message.type === 'RECORD') records++;
    }
    if (options.maxRecords !== undefined && records >= options.maxRecords) stop('limit');
  });
  let rest = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    stderr.push(...parts);
  });
  if (options.input && child.stdin) {
    child.stdin.on('error', () => {}); // it may exit before reading everything
    child.stdin.end(options.input.map((l) => l + '\n').join(''));
  }
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      lines.push(...parser.end());
      if (rest) stderr.push(rest);
      resolve({ lines, stderr, exit: { code, signal }, stoppedBy });
    });
  });
}
