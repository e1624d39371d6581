import { spawn } from 'node:child_process';
import { MessageWriter, readConnectorOutput, type ParsedLine } from '@sluice/connector-protocol';

describe('MessageWriter', () => {
  it('waits for a slow reader instead of buffering everything', async () => {
    // A reader that takes 64 KiB, then stops reading for a while.
    const child = spawn(process.execPath, [
      '-e',
      `let n = 0; process.stdin.on('data', (c) => { n += c.length; if (n > 65536) { process.stdin.pause();
       setTimeout(() => process.stdin.resume(), 300); n = -1e12; } });
       process.stdin.on('end', () => process.stdout.write('done\\n'));`,
    ]);
    const writer = new MessageWriter(child.stdin);
    const line = { type: 'LOG', log: { level: 'INFO', message: 'x'.repeat(1000) } };
    let waits = 0;
    let maxBuffered = 0;
    const started = Date.now();
    for (let i = 0; i < 2000; i++) {
      const wait = writer.write(line);
      maxBuffered = Math.max(maxBuffered, child.stdin.writableLength);
      if (wait) {
        waits++;
        await wait;
      }
    }
    await writer.end();
    const out: ParsedLine[] = [];
    for await (const p of readConnectorOutput(child.stdout)) out.push(p);
    expect(out.map((p) => p.kind === 'non-protocol' && p.text)).toEqual(['done']);
    expect(waits).toBeGreaterThan(0);
    // What the writer holds stays near the stream's high-water mark, not the 2 MB written.
    expect(maxBuffered).toBeLessThan(64 * 1024);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('fails the write once the reader has exited, instead of waiting forever', async () => {
    const child = spawn(process.execPath, ['-e', 'process.exit(0)']);
    const writer = new MessageWriter(child.stdin);
    await new Promise((resolve) => child.once('exit', resolve));
    const big = { type: 'LOG', log: { level: 'INFO', message: 'x'.repeat(1 << 20) } };
    let error: unknown;
    try {
      for (let i = 0; i < 100; i++) await writer.write(big);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(Error);
  });
});
