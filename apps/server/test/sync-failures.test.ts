import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  committedCursor,
  DESTINATION_NULL,
  DESTINATION_PG,
  ledger,
  NODE,
  putSyncFlow,
  runOutputs,
  runToEnd,
  SOURCE,
  useSyncServer,
  type SyncRunView,
} from './sync-helpers';

/*
 * Sync connectors that break the protocol or fail (docs/connectors.md#sync):
 * each fails the task with a clear error, and the committed state of the
 * connection stays where the last good sync left it.
 */
const fixture = useSyncServer();
let scripts: string;
beforeAll(async () => {
  // Readable by the task's user too (a root server runs process tasks as nobody).
  scripts = mkdtempSync(join(tmpdir(), 'sluice-sync-sources-'));
  chmodSync(scripts, 0o755);
});
afterAll(async () => {
  if (scripts) rmSync(scripts, { recursive: true, force: true });
});

/** A source of the test's own: records 101..150 of the users stream (lines 1..50, no state), then `tail`. */
function brokenSource(name: string, tail: string): string[] {
  const path = join(scripts, `${name}.cjs`);
  const record = (id: number) =>
    `{"type":"RECORD","record":{"stream":"users","emitted_at":1,"data":{"id":${id},"payload":"x"}}}`;
  writeFileSync(
    path,
    `const out = (l) => process.stdout.write(l + '\\n');
for (let id = 101; id <= 150; id++) out(${JSON.stringify(record(0)).replace('"id":0', '"id":" + id + "')});
${tail}`,
    { mode: 0o644 },
  );
  return [NODE, path];
}

const destination = () => ({ command: DESTINATION_PG, config: { url: fixture.db.url, schema: 'broken' } });

/** A first good sync to cursor 100, then the flow's source replaced by `source`: the result of that sync. */
async function afterGoodSync(flow: string, source: { command: string[]; config: Record<string, unknown> }) {
  const { api } = fixture;
  await putSyncFlow(api, flow, {
    source: { command: SOURCE, config: { streams: ['users'], records_per_stream: 100 } },
    destination: destination(),
  });
  expect((await runToEnd(api, flow)).state).toBe('SUCCEEDED');
  expect(await committedCursor(fixture.pg, flow, 'users')).toBe(100);
  const ledgerBefore = await ledger(fixture.pg, flow);
  await putSyncFlow(api, flow, { source, destination: destination() });
  const execution = await runToEnd(api, flow);
  expect(execution.state).toBe('FAILED');
  return { run: execution.taskRuns[0] as SyncRunView, ledgerBefore };
}

test('a source that prints a broken message fails with the line and what was wrong; nothing more is committed', async () => {
  const tail = `out('{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":7}}}}');
setTimeout(() => {}, 60000);`;
  const { run, ledgerBefore } = await afterGoodSync('garbage', {
    command: brokenSource('garbage', tail),
    config: {},
  });
  expect(run.error).toMatch(
    /^the source broke the protocol: line 51: STATE state\.stream\.stream_descriptor\.name/,
  );
  expect(await committedCursor(fixture.pg, 'garbage', 'users')).toBe(100);
  expect(await ledger(fixture.pg, 'garbage')).toEqual(ledgerBefore);
}, 120_000);

test('a source with an over-long line fails naming the line and the limit; nothing more is committed', async () => {
  const tail = `process.stdout.write('{"type":"LOG","log":{"level":"INFO","message":"' + 'x'.repeat(64 * 1024 * 1024 + 10) + '"}}\\n');`;
  const { run, ledgerBefore } = await afterGoodSync('long-line', {
    command: brokenSource('long', tail),
    config: {},
  });
  expect(run.error).toContain(
    'the source broke the protocol: line 51: line longer than the limit of 67108864 bytes',
  );
  expect(await committedCursor(fixture.pg, 'long-line', 'users')).toBe(100);
  expect(await ledger(fixture.pg, 'long-line')).toEqual(ledgerBefore);
}, 120_000);

test('a source that exits non-zero without a TRACE fails with its exit code and stderr; nothing more is committed', async () => {
  const tail = `console.error('upstream API answered 503'); process.exitCode = 3;`;
  const { run, ledgerBefore } = await afterGoodSync('crash', {
    command: brokenSource('crash', tail),
    config: {},
  });
  expect(run.error).toContain('the source exited with code 3 without a TRACE error');
  expect(run.error).toContain('upstream API answered 503');
  expect(run.exitCode).toBe(3);
  expect(await committedCursor(fixture.pg, 'crash', 'users')).toBe(100);
  expect(await ledger(fixture.pg, 'crash')).toEqual(ledgerBefore);
}, 120_000);

test('a destination that echoes no state while the source sent records is not a success', async () => {
  const { api } = fixture;
  const silent = join(scripts, 'silent-destination.cjs');
  writeFileSync(silent, `process.stdin.resume();`, { mode: 0o644 });
  await putSyncFlow(api, 'silent', {
    source: { command: SOURCE, config: { streams: ['users'], records_per_stream: 50 } },
    destination: { command: [NODE, silent], config: {} },
  });
  const execution = await runToEnd(api, 'silent');
  expect(execution.state).toBe('FAILED');
  const run = execution.taskRuns[0] as SyncRunView;
  expect(run.error).toContain(
    'the destination exited without acknowledging 1 of the 1 states the source sent',
  );
  expect(await runOutputs(fixture.pg, run.id)).toMatchObject({
    records_emitted: '50',
    records_committed: '0',
  });
  expect(await ledger(fixture.pg, 'silent')).toEqual([]);
}, 120_000);

test('records and bytes emitted and committed are reported as metrics while the sync runs', async () => {
  const { api } = fixture;
  await putSyncFlow(api, 'metrics', {
    source: { command: SOURCE, config: { streams: ['users'], records_per_stream: 3000, state_every: 500 } },
    destination: { command: DESTINATION_NULL, config: { delay_ms_per_record: 2 } },
    timeout: '2m',
  });
  const execution = await runToEnd(api, 'metrics');
  expect(execution.state).toBe('SUCCEEDED');
  const run = execution.taskRuns[0] as SyncRunView;
  const metrics = (await api.call('GET', `/api/v1/task-runs/${run.id}/metrics`)).body.metrics as Array<{
    name: string;
    value: number;
  }>;
  const committed = metrics.filter((m) => m.name === 'sync_records_committed').map((m) => m.value);
  // Reported every 5 s during the ~6 s sync and once at the end: a value before the last, which is all.
  expect(committed.length).toBeGreaterThanOrEqual(2);
  expect(committed.at(-1)).toBe(3000);
  expect(committed[0]).toBeLessThan(3000);
  expect(metrics.filter((m) => m.name === 'sync_records_emitted').at(-1)?.value).toBe(3000);
}, 120_000);
