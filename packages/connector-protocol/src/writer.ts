import type { Writable } from 'node:stream';
import type { ConnectorMessage } from './messages';

/** One message as one protocol line. JSON.stringify never emits a raw newline, so the framing holds. */
export function serializeMessage(message: ConnectorMessage | Record<string, unknown>): string {
  return JSON.stringify(message) + '\n';
}

/**
 * Writes protocol lines to a connector's stdin (or any Writable) and honours
 * its backpressure: once the stream's buffer is full, write() returns a
 * promise that settles on 'drain', so a slow reader slows the writer instead
 * of growing memory. While there is room it returns undefined, so a hot loop
 * pays for no promise: `const wait = w.write(m); if (wait) await wait;`
 * (`await w.write(m)` is correct too).
 */
export class MessageWriter {
  private failure: Error | undefined;
  private closed = false;

  constructor(private readonly stream: Writable) {
    stream.on('error', (err: Error) => (this.failure ??= err));
    stream.on('close', () => (this.closed = true));
  }

  write(message: ConnectorMessage | Record<string, unknown>): Promise<void> | undefined {
    return this.writeLine(serializeMessage(message));
  }

  /** Writes a line as received (e.g. a source's RECORD, forwarded unchanged); adds the newline if missing. */
  writeLine(line: string): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed || this.stream.writableEnded) {
      return Promise.reject(new Error('the connector input is closed'));
    }
    const text = line.endsWith('\n') ? line : line + '\n';
    if (this.stream.write(text)) return undefined;
    return this.drained();
  }

  /** Ends the input (the connector sees end of file) once everything written is flushed. */
  end(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed || this.stream.writableFinished) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.stream.once('error', onError);
      this.stream.end(() => {
        this.stream.off('error', onError);
        resolve();
      });
    });
  }

  private drained(): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => {
        this.stream.off('drain', onDrain);
        this.stream.off('error', onError);
        this.stream.off('close', onClose);
        if (err) reject(err);
        else resolve();
      };
      const onDrain = () => done();
      const onError = (err: Error) => done(err);
      // A reader that exits stops draining; without this the writer would wait forever.
      const onClose = () => done(this.failure ?? new Error('the connector input closed before it drained'));
      this.stream.on('drain', onDrain);
      this.stream.on('error', onError);
      this.stream.on('close', onClose);
    });
  }
}
