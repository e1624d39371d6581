/**
 * Cuts a byte stream into lines on `\n` (a trailing `\r` is dropped). A line
 * longer than `maxBytes` is emitted once, cut at a UTF-8 character boundary and
 * marked; the rest of it is discarded up to the next newline, so one endless
 * line cannot grow the runner's memory.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The current line was already emitted cut; drop bytes until the next newline. */
  private dropping = false;

  constructor(
    private readonly maxBytes: number,
    private readonly emit: (line: string) => void,
    /** Applied to a cut line's kept part before the marker (a secret may straddle the cut). */
    private readonly maskCut: (kept: string) => string = (kept) => kept,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) {
        this.append(chunk.subarray(start));
        return;
      }
      this.append(chunk.subarray(start, newline));
      this.endLine();
      start = newline + 1;
    }
  }

  /** Emits a last line that had no newline. */
  end(): void {
    if (this.pendingBytes > 0) this.endLine();
    this.dropping = false;
  }

  private append(part: Buffer): void {
    if (this.dropping || part.length === 0) return;
    this.pending.push(part);
    this.pendingBytes += part.length;
    if (this.pendingBytes > this.maxBytes) {
      this.emit(cutLine(Buffer.concat(this.pending), this.maxBytes, this.maskCut));
      this.reset();
      this.dropping = true;
    }
  }

  private endLine(): void {
    if (this.dropping) {
      this.dropping = false;
      return;
    }
    let line = Buffer.concat(this.pending, this.pendingBytes);
    if (line[line.length - 1] === 0x0d) line = line.subarray(0, -1);
    this.reset();
    this.emit(line.toString('utf8'));
  }

  private reset(): void {
    this.pending = [];
    this.pendingBytes = 0;
  }
}

export function cutMarker(maxBytes: number): string {
  return ` [line cut: longer than ${maxBytes} bytes]`;
}

function cutLine(bytes: Buffer, maxBytes: number, mask: (kept: string) => string): string {
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) so a multi-byte character is not split.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return mask(bytes.subarray(0, end).toString('utf8')) + cutMarker(maxBytes);
}
