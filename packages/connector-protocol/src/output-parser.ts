import { parseLine, ProtocolLineError, type ParsedLine } from './parse-message';

/**
 * The longest line accepted by default: 64 MiB. A line is held whole while it
 * is parsed (its bytes, its string, its object: roughly 3–4× its size), so the
 * limit bounds a connector reader's memory. It is far above big records
 * (several MB) and leaves room for the other large single-line messages: the
 * CATALOG of a database with thousands of tables and a GLOBAL state that
 * carries every stream's cursor.
 */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface OutputParserOptions {
  /** Longest line in bytes, without its newline; default DEFAULT_MAX_LINE_BYTES. */
  maxLineBytes?: number;
}

const NEWLINE = 0x0a;
const CR = 0x0d;
const OPEN_BRACE = 0x7b;

/**
 * Splits a connector's output into lines and parses each one. Feed it chunks
 * as they arrive; it keeps only the unfinished last line between chunks (so a
 * message, or a UTF-8 character, split across chunks is whole again) and
 * decodes bytes only once a line is complete. Line numbers count from 1 and
 * include empty lines, which yield nothing.
 */
export class ConnectorOutputParser {
  readonly maxLineBytes: number;
  private pieces: Buffer[] = [];
  private pendingBytes = 0;
  /** The current line went over the limit: its error is out, skip to its end. */
  private skipping = false;
  private lineNumber = 0;

  constructor(options: OutputParserOptions = {}) {
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  /** Lines seen so far (complete ones). */
  get lines(): number {
    return this.lineNumber;
  }

  /** Parses the complete lines of `chunk` (after what earlier chunks left unfinished). */
  push(chunk: Uint8Array | string, out: ParsedLine[] = []): ParsedLine[] {
    const buf =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let pos = 0;
    for (;;) {
      const nl = buf.indexOf(NEWLINE, pos);
      if (nl === -1) {
        this.hold(buf, pos, out);
        return out;
      }
      if (this.skipping) {
        this.skipping = false;
        this.lineNumber++;
      } else if (this.pieces.length === 0) {
        this.complete(buf, pos, nl, nl + 1, out);
      } else {
        const bytes = this.pendingBytes + (nl - pos);
        if (bytes > this.maxLineBytes) {
          this.pieces = [];
          this.pendingBytes = 0;
          out.push(this.tooLong(this.lineNumber + 1));
          this.lineNumber++;
        } else {
          // With its newline, so the line's raw bytes are the same whatever the chunk boundaries.
          this.pieces.push(buf.subarray(pos, nl + 1));
          const whole = Buffer.concat(this.pieces, bytes + 1);
          this.pieces = [];
          this.pendingBytes = 0;
          this.complete(whole, 0, bytes, bytes + 1, out);
        }
      }
      pos = nl + 1;
    }
  }

  /** The input has ended: a last line without a newline is still a line. */
  end(out: ParsedLine[] = []): ParsedLine[] {
    if (this.skipping) {
      this.skipping = false;
      this.lineNumber++;
    } else if (this.pieces.length > 0) {
      const whole = Buffer.concat(this.pieces, this.pendingBytes);
      this.pieces = [];
      this.pendingBytes = 0;
      this.complete(whole, 0, whole.length, whole.length, out);
    }
    return out;
  }

  /** Keeps the unfinished tail of a chunk, or reports it as too long once it passes the limit. */
  private hold(buf: Buffer, pos: number, out: ParsedLine[]): void {
    if (pos >= buf.length || this.skipping) return;
    const bytes = this.pendingBytes + (buf.length - pos);
    if (bytes > this.maxLineBytes) {
      // Reported now, not at the newline that may never come; the rest of the line is dropped unread.
      this.pieces = [];
      this.pendingBytes = 0;
      this.skipping = true;
      out.push(this.tooLong(this.lineNumber + 1));
      return;
    }
    // A copy: the caller may reuse the chunk's memory once push returns.
    this.pieces.push(Buffer.from(buf.subarray(pos)));
    this.pendingBytes = bytes;
  }

  /** One complete line, bytes [start, end) of buf without its newline; [start, rawEnd) with it. */
  private complete(buf: Buffer, start: number, end: number, rawEnd: number, out: ParsedLine[]): void {
    const line = ++this.lineNumber;
    if (end > start && buf[end - 1] === CR) end--;
    if (end - start > this.maxLineBytes) {
      out.push(this.tooLong(line));
      return;
    }
    if (end === start) return;
    const text = buf.toString('utf8', start, end);
    if (buf[start] !== OPEN_BRACE && text.trim() === '') return;
    const parsed = parseLine(text, line, end - start);
    if (parsed.kind === 'message') parsed.raw = buf.subarray(start, rawEnd);
    out.push(parsed);
  }

  private tooLong(line: number): ParsedLine {
    const limit = this.maxLineBytes;
    return {
      kind: 'error',
      line,
      error: new ProtocolLineError(line, 'line_too_long', `line longer than the limit of ${limit} bytes`),
    };
  }
}

export type ConnectorOutput = AsyncIterable<Uint8Array | string>;

/**
 * The parsed lines of a connector's output (a Node Readable, e.g. a child's
 * stdout, or any async iterable of chunks), one chunk's worth at a time: the
 * cheapest way to consume a fast source. Reading pauses while the consumer
 * works, so a slow consumer slows the connector down (backpressure).
 */
export async function* readConnectorOutputBatches(
  source: ConnectorOutput,
  options: OutputParserOptions = {},
): AsyncGenerator<ParsedLine[], void, undefined> {
  const parser = new ConnectorOutputParser(options);
  for await (const chunk of source) {
    const lines = parser.push(chunk);
    if (lines.length > 0) yield lines;
  }
  const last = parser.end();
  if (last.length > 0) yield last;
}

/** The parsed lines of a connector's output, one by one (see readConnectorOutputBatches). */
export async function* readConnectorOutput(
  source: ConnectorOutput,
  options: OutputParserOptions = {},
): AsyncGenerator<ParsedLine, void, undefined> {
  for await (const batch of readConnectorOutputBatches(source, options)) yield* batch;
}
