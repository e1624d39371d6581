import { eventually } from '@sluice/testing';
import { relayQueuedWork } from '../src/relay-queued-work';

type Answer = boolean | Error;

/** A waitForWork that answers from a script, then holds until released by stop. */
function scriptedServer(script: Answer[]) {
  const asked: number[] = [];
  let release: ((value: boolean) => void) | null = null;
  return {
    asked,
    waitForWork(timeoutMs: number): Promise<boolean> {
      asked.push(timeoutMs);
      const next = script.shift();
      if (next === undefined) return new Promise<boolean>((resolve) => (release = resolve));
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
    /** Ends the held long poll as a server would after its timeout. */
    timeOut: () => release?.(false),
  };
}

function recorder() {
  const lines: Array<[string, string]> = [];
  return {
    lines,
    log: {
      warn: (message: string) => lines.push(['warn', message]),
      info: (message: string) => lines.push(['info', message]),
    },
  };
}

const until = (check: () => boolean) => eventually('the condition', check, 10_000, 5);

describe('relayQueuedWork', () => {
  it('wakes the instance each time the server says work was queued, and only then', async () => {
    const server = scriptedServer([true, true, true]);
    const wake = jest.fn();
    // waitMs 0 would look like a server answering too fast; the script answers true, which never pauses.
    const stop = relayQueuedWork({ protocol: server, wake, log: recorder().log, waitMs: 25_000 });
    await until(() => server.asked.length === 4);
    expect(wake).toHaveBeenCalledTimes(3);
    expect(server.asked).toEqual([25_000, 25_000, 25_000, 25_000]);
    stop();
    server.timeOut();
  });

  it('backs off while the server fails, warns once per outage, and says when it answers again', async () => {
    const broken = new Error('executor API waitForWork: 404 not_found');
    const server = scriptedServer([broken, broken, broken, true]);
    const wake = jest.fn();
    const { log, lines } = recorder();
    const stop = relayQueuedWork({ protocol: server, wake, log, retryMs: 5 });
    await until(() => wake.mock.calls.length === 1);
    expect(lines).toEqual([
      ['warn', 'wait-for-work failed; relying on polling until the server answers'],
      ['info', 'wait-for-work answers again; wake-ups resume'],
    ]);
    stop();
    server.timeOut();
  });

  it('asks nothing more once stopped', async () => {
    const server = scriptedServer([]);
    const wake = jest.fn();
    const stop = relayQueuedWork({ protocol: server, wake, log: recorder().log });
    await until(() => server.asked.length === 1);
    stop();
    server.timeOut();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.asked).toHaveLength(1);
    expect(wake).not.toHaveBeenCalled();
  });

  it('does not spin on a server that answers "nothing" at once', async () => {
    const server = scriptedServer(Array.from({ length: 1000 }, () => false));
    const stop = relayQueuedWork({ protocol: server, wake: jest.fn(), log: recorder().log, retryMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 250));
    stop();
    expect(server.asked.length).toBeLessThanOrEqual(4);
  });
});
