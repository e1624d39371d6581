import type { z } from 'zod';
import { MESSAGE_SCHEMAS, isMessageType, type ConnectorMessage, type MessageType } from './messages';

/**
 * What one line of a connector's output is. Connectors print more than
 * protocol messages (JVM warnings, stray prints), so only a line that claims
 * to be a known message and is malformed is an error; anything else is kept
 * and reported for the caller to log.
 */
export type ParsedLine =
  /** A valid message; `text` is the line as received, to forward without serializing again. */
  | {
      kind: 'message';
      line: number;
      message: ConnectorMessage;
      text: string;
      bytes: number;
      /**
       * Set by ConnectorOutputParser: the line's bytes as received, its line
       * end included when it had one — a view of the chunk pushed, so a
       * forwarder can write the bytes on without encoding `text` again.
       * Valid as long as that chunk's memory is (forward it before reusing it).
       */
      raw?: Buffer;
    }
  /**
   * A JSON object whose `type` this version does not know. The protocol's
   * platform ignores such messages; so does Sluice (it is not a failure).
   */
  | {
      kind: 'unknown';
      line: number;
      type: string;
      value: Record<string, unknown>;
      text: string;
      bytes: number;
    }
  /** Not a protocol message (not JSON, not an object, or no string `type`): keep it as a log line. */
  | { kind: 'non-protocol'; line: number; text: string; bytes: number }
  | { kind: 'error'; line: number; error: ProtocolLineError };

export type ProtocolLineErrorCode = 'line_too_long' | 'invalid_message';

/** A line that breaks the protocol; `message` reads `line 42: RECORD record.stream: expected string, received number`. */
export class ProtocolLineError extends Error {
  constructor(
    readonly line: number,
    readonly code: ProtocolLineErrorCode,
    /** What was wrong, without the line number. */
    readonly detail: string,
    /** For invalid_message: the type the line claimed (a caller may treat a broken LOG more gently than a broken STATE). */
    readonly messageType?: MessageType,
  ) {
    super(`line ${line}: ${detail}`);
    this.name = 'ProtocolLineError';
  }
}

/** Parses one line (without its newline); `bytes` is its size in bytes as received. */
export function parseLine(text: string, line: number, bytes = Buffer.byteLength(text)): ParsedLine {
  // Protocol messages are JSON objects: anything else is a log line, and the
  // cheap first-character test spares JSON.parse a throw on most of them.
  if (text.charCodeAt(0) !== 0x7b /* { */) {
    const trimmed = text.trimStart();
    if (!trimmed.startsWith('{')) return { kind: 'non-protocol', line, text, bytes };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'non-protocol', line, text, bytes };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'non-protocol', line, text, bytes };
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return { kind: 'non-protocol', line, text, bytes };
  if (!isMessageType(type)) {
    return { kind: 'unknown', line, type, value: value as Record<string, unknown>, text, bytes };
  }
  if (type === 'RECORD' && isPlainRecord(value)) {
    return { kind: 'message', line, message: value as ConnectorMessage, text, bytes };
  }
  const result = MESSAGE_SCHEMAS[type].safeParse(value);
  if (!result.success) {
    return {
      kind: 'error',
      line,
      error: new ProtocolLineError(
        line,
        'invalid_message',
        `${type} ${describeIssue(result.error.issues)}`,
        type,
      ),
    };
  }
  return { kind: 'message', line, message: result.data as ConnectorMessage, text, bytes };
}

/**
 * The common case of the hottest message, checked by hand: exactly what
 * RecordMessage accepts, minus zod's copy of the object (a third of the
 * parse cost of a small record). Anything else goes through the schema,
 * which also words the error.
 */
function isPlainRecord(value: object): boolean {
  const record = (value as { record?: unknown }).record;
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return false;
  const r = record as { stream?: unknown; namespace?: unknown; data?: unknown; emitted_at?: unknown };
  return (
    typeof r.stream === 'string' &&
    typeof r.emitted_at === 'number' &&
    Number.isFinite(r.emitted_at) &&
    (r.namespace === undefined || r.namespace === null || typeof r.namespace === 'string') &&
    typeof r.data === 'object' &&
    r.data !== null &&
    !Array.isArray(r.data)
  );
}

/** The first issue as `path: what`, e.g. `record.stream: expected string, received number`. */
function describeIssue(issues: z.core.$ZodIssue[]): string {
  const issue = issues[0];
  if (!issue) return 'invalid message';
  const path = issue.path.map(String).join('.') || '(message)';
  const what = issue.message.replace(/^Invalid input: /, '');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return `${path}: ${what}${more}`;
}
