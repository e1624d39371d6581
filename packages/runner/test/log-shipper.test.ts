import { LogLine, RunnerApiError } from '@sluice/protocol';
import { LogShipper } from '../src/log-shipper';

/** A send function whose calls the test answers one by one. */
function controlledSend() {
  const calls: { lines: LogLine[]; resolve: () => void; reject: (e: Error) => void }[] = [];
  const send = (lines: LogLine[]) =>
    new Promise<void>((resolve, reject) => calls.push({ lines: [...lines], resolve, reject }));
  return { calls, send };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

test('a long queue pauses the task output until it has drained to half', async () => {
  const { calls, send } = controlledSend();
  const pressure: boolean[] = [];
  const shipper = new LogShipper({
    send,
    log: () => {},
    onPressure: (paused) => pressure.push(paused),
    batchLines: 4,
    flushIntervalMs: 1,
    maxQueuedLines: 8,
  });
  shipper.start();
  for (let i = 0; i < 8; i++) shipper.write('stdout', `l${i}`);
  expect(pressure).toEqual([true]);

  await tick();
  calls[0]!.resolve();
  await tick();
  expect(pressure).toEqual([true, false]);
  expect(calls[1]!.lines.map((l) => l.seq)).toEqual([5, 6, 7, 8]);
  calls[1]!.resolve();
  expect(await shipper.close(1000)).toBe(0);
});

test('a failed batch is resent first, with the same seqs, before newer lines', async () => {
  const { calls, send } = controlledSend();
  const shipper = new LogShipper({ send, log: () => {}, batchLines: 2, flushIntervalMs: 1, retryDelayMs: 1 });
  shipper.start();
  shipper.write('stdout', 'a');
  shipper.write('stderr', 'b');
  await tick();
  calls[0]!.reject(new RunnerApiError('sendLogs', 503, null, '503'));
  shipper.write('system', 'c');
  await tick();
  calls[1]!.resolve();
  await tick();
  calls[2]!.resolve();

  expect(await shipper.close(1000)).toBe(0);
  expect(calls.map((c) => c.lines.map((l) => `${l.seq}:${l.stream}:${l.line}`))).toEqual([
    ['1:stdout:a', '2:stderr:b'],
    ['1:stdout:a', '2:stderr:b'],
    ['3:system:c'],
  ]);
});

test('close gives up at its deadline and reports what was not delivered', async () => {
  const shipper = new LogShipper({ send: () => new Promise(() => {}), log: () => {} });
  shipper.write('stdout', 'never acknowledged');
  expect(await shipper.close(50)).toBe(1);
});
