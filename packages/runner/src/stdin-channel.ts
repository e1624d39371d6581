import { fstatSync } from 'node:fs';
import type { Readable } from 'node:stream';

/**
 * The runner's stdin as the process executor uses it: a pipe held open for
 * the runner's whole life, carrying at most one line (a standby's
 * assignment). Its end means the executor's process died, even by kill -9.
 */
export interface StdinChannel {
  /** The first line, without its newline; null when the input ended first. Cut at `maxLineBytes` + 1. */
  firstLine: Promise<string | null>;
  /** Settles when the input ends, closes or fails. */
  ended: Promise<void>;
}

/** True when fd 0 is a pipe: Node's 'pipe' stdio is a socket pair, a shell's pipe a FIFO. */
export function stdinIsPipe(): boolean {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/** Starts reading `input` (to its end, so that the end is seen); everything after the first line is ignored. */
export function openStdinChannel(input: Readable, maxLineBytes: number): StdinChannel {
  let chunks: Buffer[] | null = [];
  let bytes = 0;
  let resolveLine: (line: string | null) => void = () => undefined;
  const firstLine = new Promise<string | null>((resolve) => (resolveLine = resolve));
  const takeLine = (line: string | null): void => {
    chunks = null;
    resolveLine(line);
  };

  input.on('data', (chunk: Buffer | string) => {
    if (chunks === null) return;
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const newline = data.indexOf(0x0a);
    const part = newline === -1 ? data : data.subarray(0, newline);
    chunks.push(part);
    bytes += part.length;
    // Past the limit the line is refused as too long anyway; keep no more of it.
    if (newline !== -1 || bytes > maxLineBytes) {
      takeLine(
        Buffer.concat(chunks)
          .subarray(0, maxLineBytes + 1)
          .toString('utf8'),
      );
    }
  });
  const ended = new Promise<void>((resolve) => {
    const end = (): void => {
      takeLine(null);
      resolve();
    };
    input.once('end', end);
    input.once('close', end);
    input.once('error', end);
  });
  input.resume();
  return { firstLine, ended };
}
