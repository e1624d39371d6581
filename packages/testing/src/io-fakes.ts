import { PassThrough } from 'node:stream';

/**
 * Stand-ins for the logs and terminals that code under test writes to. They
 * match the packages' logger interfaces by shape, so this test-only library
 * imports none of them.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface TestLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** A logger that drops everything: for code that must log somewhere, in tests that look elsewhere. */
export const silentLogger: TestLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

export interface LogRecord {
  level: LogLevel;
  message: string;
  fields: LogFields | undefined;
}

export interface RecordingLogger extends TestLogger {
  /** Every call, with its fields. */
  records: LogRecord[];
  /** The same calls as level and message only, for assertions that ignore the fields. */
  lines: Array<{ level: LogLevel; message: string }>;
}

/** A logger that keeps what it was told, for assertions on warnings and errors. */
export function recordingLogger(): RecordingLogger {
  const records: LogRecord[] = [];
  const lines: RecordingLogger['lines'] = [];
  const at =
    (level: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      records.push({ level, message, fields });
      lines.push({ level, message });
    };
  return { records, lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export interface CapturedOutput {
  /** What an app's main(argv, io) takes: its environment and two streams. */
  io: { env: NodeJS.ProcessEnv; stdout: PassThrough; stderr: PassThrough };
  /** Everything written to stdout so far. */
  out(): string;
  /** Everything written to stderr so far. */
  err(): string;
}

/** An app's terminal in memory: `main(argv, captured.io)` runs in the test process and its output is kept. */
export function captureOutput(env: NodeJS.ProcessEnv = {}): CapturedOutput {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString()));
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString()));
  return { io: { env, stdout, stderr }, out: () => out.join(''), err: () => err.join('') };
}
