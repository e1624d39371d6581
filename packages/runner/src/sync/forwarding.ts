/**
 * How the orchestrator writes the source's lines on to the destination
 * (docs/connectors.md#sync): as the bytes it received, in few writes.
 */

const NEWLINE = Buffer.from('\n');

/** Bytes written to the destination and not yet taken by it, before the source is paused. */
export const MAX_PENDING_BYTES = 1024 * 1024;

/**
 * The lines of one batch to forward, as bytes: consecutive lines that sit
 * next to each other in the source's chunk (the usual case: a chunk of
 * records) become one view of it, so a batch is mostly one write of the
 * bytes as received, without encoding any text again.
 */
export class ByteRuns {
  private readonly parts: Buffer[] = [];
  private runBuffer: ArrayBufferLike | null = null;
  private runStart = 0;
  private runEnd = 0;

  add(raw: Buffer | undefined, text: string): void {
    if (!raw) {
      this.flush();
      this.parts.push(Buffer.from(text + '\n'));
      return;
    }
    if (raw.buffer === this.runBuffer && raw.byteOffset === this.runEnd) {
      this.runEnd += raw.length;
    } else {
      this.flush();
      this.runBuffer = raw.buffer;
      this.runStart = raw.byteOffset;
      this.runEnd = raw.byteOffset + raw.length;
    }
    // A line without its line end (the last one, or one put together from pieces) gets one.
    if (raw[raw.length - 1] !== 0x0a) {
      this.flush();
      this.parts.push(NEWLINE);
    }
  }

  /** Everything added, as one buffer; null when nothing was. */
  take(): Buffer | null {
    this.flush();
    if (this.parts.length === 0) return null;
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
  }

  private flush(): void {
    if (this.runBuffer === null) return;
    this.parts.push(Buffer.from(this.runBuffer, this.runStart, this.runEnd - this.runStart));
    this.runBuffer = null;
  }
}

/** Settles on 'drain', or when the stream closes or fails (a destination that exited stops draining). */
export function drained(stream: NodeJS.WritableStream & { destroyed: boolean }): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      stream.off('error', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    stream.on('error', done);
  });
}
