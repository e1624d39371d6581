import type { ConnectorMessage, ParsedLine } from '@sluice/connector-protocol';
import type { LogStream } from '@sluice/protocol';
import { cutMarker } from '../line-splitter';
import type { SyncRole } from './endpoint';

const KEEP_LOG_LINES = 20;

export interface ConnectorLogOptions {
  /** Writes a task log line (the shipper masks it again). */
  log: (stream: LogStream, line: string) => void;
  mask: (text: string) => string;
  logLineMaxBytes: number;
}

/**
 * What one connector of a sync says besides its data: LOG messages, TRACE
 * errors, non-protocol lines and stderr become task log lines prefixed with
 * the role (`[source] INFO …`); the first TRACE error and the last log lines
 * are kept for the task's error. A protocol error on a line that is not a LOG
 * is returned as fatal: a broken RECORD or STATE cannot be skipped without
 * losing or misplacing data.
 */
export class ConnectorLog {
  private readonly lines: string[] = [];
  private traceError: string | null = null;

  constructor(
    readonly role: SyncRole,
    private readonly options: ConnectorLogOptions,
  ) {}

  /** The first TRACE error's message, if the connector sent one. */
  get trace(): string | null {
    return this.traceError;
  }

  /** Its last log lines, oldest first. */
  get last(): string[] {
    return [...this.lines];
  }

  stderrLine(text: string): void {
    this.keep(text);
    this.options.log('stderr', `[${this.role}] ${text}`);
  }

  /** A line that is not a RECORD or STATE. Returns a fatal protocol error, or null. */
  line(line: ParsedLine): string | null {
    switch (line.kind) {
      case 'non-protocol':
        this.keep(line.text);
        this.write('stdout', line.text);
        return null;
      case 'unknown':
        this.write('system', `line ${line.line}: message of unknown type ${line.type} ignored`);
        return null;
      case 'error':
        this.write('system', `protocol error: ${line.error.message}`);
        if (line.error.code === 'invalid_message' && line.error.messageType === 'LOG') return null;
        return `the ${this.role} broke the protocol: ${line.error.message}`;
      case 'message':
        this.message(line.message, line.bytes);
        return null;
    }
  }

  private message(m: ConnectorMessage, bytes: number): void {
    switch (m.type) {
      case 'LOG':
        this.keep(`${m.log.level} ${m.log.message}`);
        this.write('stdout', `${m.log.level} ${m.log.message}`);
        return;
      case 'TRACE':
        if (m.trace.type === 'ERROR' && m.trace.error) {
          const kind = m.trace.error.failure_type ?? 'error';
          this.traceError ??= m.trace.error.message;
          this.keep(`TRACE ERROR (${kind}): ${m.trace.error.message}`);
          this.write('stdout', `TRACE ERROR (${kind}): ${m.trace.error.message}`);
        }
        // Estimates, stream statuses and analytics are not logged: a source may send one per stream per batch.
        return;
      default:
        this.write('system', `${m.type} message (${bytes} bytes) ignored in a sync`);
    }
  }

  private keep(text: string): void {
    this.lines.push(text);
    if (this.lines.length > KEEP_LOG_LINES) this.lines.shift();
  }

  private write(stream: LogStream, text: string): void {
    const line = `[${this.role}] ${text}`;
    const masked = this.options.mask(line);
    const max = this.options.logLineMaxBytes;
    if (Buffer.byteLength(masked) <= max) return this.options.log(stream, masked);
    const bytes = Buffer.from(masked);
    let end = max;
    // Step back over UTF-8 continuation bytes so a character is not split.
    while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
    this.options.log(stream, bytes.subarray(0, end).toString('utf8') + cutMarker(max));
  }
}
