import { startPeriodic } from '../src/periodic';

function recorder() {
  const errors: string[] = [];
  return { errors, log: { error: (message: string) => errors.push(message) } };
}

describe('startPeriodic', () => {
  it('stop() waits for the pass in flight, and no pass starts after it', async () => {
    let release!: () => void;
    let entered!: () => void;
    const inPass = new Promise<void>((resolve) => (entered = resolve));
    let passes = 0;
    const stop = startPeriodic({
      name: 'watchdog',
      intervalMs: 5,
      firstDelayMs: 0,
      log: recorder().log,
      run: () => {
        passes += 1;
        entered();
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    await inPass;
    let stopped = false;
    const stopping = stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(stopped).toBe(false); // the pass is still running
    release();
    await stopping;
    expect(stopped).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(passes).toBe(1);
  });

  it('logs a failed pass by name and goes on', async () => {
    const { errors, log } = recorder();
    let passes = 0;
    const stop = startPeriodic({
      name: 'retention',
      intervalMs: 5,
      firstDelayMs: 0,
      log,
      run: () => {
        passes += 1;
        return Promise.reject(new Error('database gone'));
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 60));
    await stop();
    expect(passes).toBeGreaterThan(1);
    expect(errors[0]).toBe('retention pass failed');
  });
});
