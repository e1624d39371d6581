import { EventEmitter } from 'node:events';
import { runUntilSignal, type Stoppable } from '../src/run-until-signal';

/** A fake signal source: emits like `process` does, counts listeners. */
function signals() {
  const emitter = new EventEmitter();
  return {
    source: emitter,
    send: (signal: NodeJS.Signals) => emitter.emit(signal, signal),
    listening: () => emitter.listenerCount('SIGTERM') + emitter.listenerCount('SIGINT'),
  };
}

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('runUntilSignal', () => {
  it('stops through stop() on SIGTERM and resolves 0, listening no more', async () => {
    const sig = signals();
    const steps: string[] = [];
    const running: Stoppable = { stop: () => (steps.push('stop'), Promise.resolve()) };
    const code = runUntilSignal(() => Promise.resolve(running), {
      signals: sig.source,
      stopTimeoutMs: 1_000,
      onStopping: (s) => steps.push(`stopping ${s}`),
      onStopped: () => steps.push('stopped'),
    });
    await tick();
    expect(steps).toEqual([]);
    sig.send('SIGTERM');
    expect(await code).toBe(0);
    expect(steps).toEqual(['stopping SIGTERM', 'stop', 'stopped']);
    expect(sig.listening()).toBe(0);
  });

  it('stops a process that got SIGINT while starting as soon as it is up', async () => {
    const sig = signals();
    const started = deferred();
    const stop = jest.fn(() => Promise.resolve());
    const code = runUntilSignal(() => started.promise.then(() => ({ stop })), {
      signals: sig.source,
      stopTimeoutMs: 1_000,
    });
    sig.send('SIGINT');
    await tick();
    expect(stop).not.toHaveBeenCalled();
    started.resolve();
    expect(await code).toBe(0);
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('gives up on a stop slower than the timeout with 1', async () => {
    const sig = signals();
    const timedOut: number[] = [];
    const code = runUntilSignal(() => Promise.resolve({ stop: () => new Promise<void>(() => undefined) }), {
      signals: sig.source,
      stopTimeoutMs: 50,
      onStopTimeout: (ms) => timedOut.push(ms),
    });
    await tick();
    sig.send('SIGTERM');
    expect(await code).toBe(1);
    expect(timedOut).toEqual([50]);
    expect(sig.listening()).toBe(0);
  });

  it('answers a second signal with 130 without waiting for the stop', async () => {
    const sig = signals();
    const again: string[] = [];
    const code = runUntilSignal(() => Promise.resolve({ stop: () => new Promise<void>(() => undefined) }), {
      signals: sig.source,
      stopTimeoutMs: 60_000,
      onSecondSignal: (s) => again.push(s),
    });
    await tick();
    sig.send('SIGTERM');
    await tick();
    sig.send('SIGINT');
    expect(await code).toBe(130);
    expect(again).toEqual(['SIGINT']);
  });

  it('resolves 1 when the stop fails, and rejects when the start does', async () => {
    const sig = signals();
    const failures: unknown[] = [];
    const code = runUntilSignal(
      () => Promise.resolve({ stop: () => Promise.reject(new Error('stuck port')) }),
      {
        signals: sig.source,
        stopTimeoutMs: 1_000,
        onStopFailed: (err) => failures.push(err),
      },
    );
    await tick();
    sig.send('SIGTERM');
    expect(await code).toBe(1);
    expect(String(failures[0])).toContain('stuck port');

    await expect(
      runUntilSignal(() => Promise.reject(new Error('no database')), {
        signals: sig.source,
        stopTimeoutMs: 1,
      }),
    ).rejects.toThrow('no database');
    expect(sig.listening()).toBe(0);
  });
});
