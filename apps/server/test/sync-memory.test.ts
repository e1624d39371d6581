import { readFileSync } from 'node:fs';
import { DESTINATION_NULL, NAMESPACE, putSyncFlow, SOURCE, type SyncRunView } from './sync-helpers';
import { useStandaloneServer } from './standalone';

/*
 * Backpressure (docs/connectors.md#sync): a destination slower than its
 * source slows the source down; the runner between them does not buffer.
 * 500k records of 1 KB (500 MB) through a destination about half as fast as
 * the source: a runner that buffered would grow by hundreds of MB.
 */
const fixture = useStandaloneServer();

const rssBytes = (pid: number): number | null => {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
};

test('a slow destination: the runner stays within a bounded memory while the source could go faster', async () => {
  const { api } = fixture;
  await putSyncFlow(api, 'slow', {
    source: {
      command: SOURCE,
      config: {
        streams: ['users'],
        records_per_stream: 500_000,
        record_size_bytes: 1000,
        state_every: 50_000,
      },
    },
    destination: { command: DESTINATION_NULL, config: { delay_ms_per_record: 0.02 } },
    timeout: '5m',
  });
  const id = await api.run(NAMESPACE, 'slow');
  const running = await api.waitFor(id, (e) => e.taskRuns[0]?.externalRef?.startsWith('pid:') === true);
  const pid = Number(running.taskRuns[0]!.externalRef!.slice(4));
  const samples: number[] = [];
  let execution = running;
  while (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(execution.state)) {
    const rss = rssBytes(pid);
    if (rss !== null) samples.push(rss);
    await new Promise((r) => setTimeout(r, 200));
    execution = await api.execution(id);
  }
  expect(execution.state).toBe('SUCCEEDED');
  expect((execution.taskRuns[0] as SyncRunView).outputs).toMatchObject({ records_committed: '500000' });
  expect(samples.length).toBeGreaterThan(10);
  const growth = Math.max(...samples) - (samples[0] ?? 0);
  expect(growth).toBeLessThan(150 * 1024 * 1024);
}, 360_000);
