import { StaleFenceError, type LogLine } from '@sluice/protocol';
import {
  addMetrics,
  appendLogs,
  artifactsTotalSize,
  getArtifact,
  getOutputsOfExecution,
  listArtifacts,
  listMetrics,
  putArtifact,
  readLogs,
  setOutputs,
  watchdogSweep,
} from '@sluice/store';
import { claimOne, completeTaskRun, queueOne, seedExecution, useStoreDatabase } from './fixtures';

const line = (seq: number, text = `line ${seq}`): LogLine => ({
  seq,
  stream: 'stdout',
  line: text,
  ts: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
});

describe('logs, outputs, metrics and artifacts of a task run', () => {
  const store = useStoreDatabase();
  let execution: string;
  beforeEach(async () => {
    await store.pool.query('DELETE FROM executions');
    execution = await seedExecution(store.pool);
  });

  it('keeps the first copy of resent log lines and reads them back in order', async () => {
    await queueOne(store.pool, execution);
    const run = await claimOne(store.pool);
    const ref = { taskRunId: run.id, fence: run.fence };

    expect(await appendLogs(store.pool, { ...ref, lines: [line(3), line(1), line(2)] })).toBe(3);
    // A resent batch overlapping the first: only seq 4 and 5 are new; seq 2's second copy is ignored.
    expect(await appendLogs(store.pool, { ...ref, lines: [line(2, 'changed'), line(4), line(5)] })).toBe(2);
    expect(await appendLogs(store.pool, { ...ref, lines: [] })).toBe(0);

    const all = await readLogs(store.pool, run.id);
    expect(all.map((l) => [l.seq, l.line])).toEqual([
      [1, 'line 1'],
      [2, 'line 2'],
      [3, 'line 3'],
      [4, 'line 4'],
      [5, 'line 5'],
    ]);
    expect(all[0]?.ts.toISOString()).toBe('2026-01-01T00:00:01.000Z');
    expect((await readLogs(store.pool, run.id, { afterSeq: 3, limit: 1 })).map((l) => l.seq)).toEqual([4]);
  });

  it('accepts a late flush from the holder after its completion, but not after someone else ended the run', async () => {
    await queueOne(store.pool, execution);
    await queueOne(store.pool, execution);
    const finished = await claimOne(store.pool);
    const lost = await claimOne(store.pool);
    await completeTaskRun(store.pool, { taskRunId: finished.id, fence: finished.fence, state: 'SUCCEEDED' });
    expect(
      await appendLogs(store.pool, { taskRunId: finished.id, fence: finished.fence, lines: [line(1)] }),
    ).toBe(1);

    await store.pool.query(`UPDATE task_runs SET heartbeat_at = now() - interval '1 hour' WHERE id = $1`, [
      lost.id,
    ]);
    await watchdogSweep(store.pool, { heartbeatTimeoutMs: 30_000 });
    await expect(
      appendLogs(store.pool, { taskRunId: lost.id, fence: lost.fence, lines: [line(1)] }),
    ).rejects.toBeInstanceOf(StaleFenceError);
    expect(await readLogs(store.pool, lost.id)).toEqual([]);
  });

  it('stores a line holding a NUL character instead of failing the batch', async () => {
    await queueOne(store.pool, execution);
    const run = await claimOne(store.pool);
    await appendLogs(store.pool, { taskRunId: run.id, fence: run.fence, lines: [line(1, 'a\u0000b')] });
    expect((await readLogs(store.pool, run.id))[0]?.line).toBe('a\uFFFDb');
  });

  it('gives each task the outputs of its latest succeeded attempt', async () => {
    await queueOne(store.pool, execution, { taskId: 'fetch', attempt: 1 });
    const first = await claimOne(store.pool);
    await setOutputs(store.pool, {
      taskRunId: first.id,
      fence: first.fence,
      outputs: { rows: '1', stale: 'yes' },
    });
    await completeTaskRun(store.pool, {
      taskRunId: first.id,
      fence: first.fence,
      state: 'FAILED',
      reason: 'exit_code',
    });

    await queueOne(store.pool, execution, { taskId: 'fetch', attempt: 2 });
    const retry = await claimOne(store.pool);
    await setOutputs(store.pool, { taskRunId: retry.id, fence: retry.fence, outputs: { rows: '41' } });
    await setOutputs(store.pool, {
      taskRunId: retry.id,
      fence: retry.fence,
      outputs: { rows: '42', bytes: '7' },
    });
    await completeTaskRun(store.pool, { taskRunId: retry.id, fence: retry.fence, state: 'SUCCEEDED' });

    await queueOne(store.pool, execution, { taskId: 'quiet' });
    const quiet = await claimOne(store.pool);
    await completeTaskRun(store.pool, { taskRunId: quiet.id, fence: quiet.fence, state: 'SUCCEEDED' });
    await queueOne(store.pool, execution, { taskId: 'pending' });

    expect(await getOutputsOfExecution(store.pool, execution)).toEqual({
      fetch: { rows: '42', bytes: '7' },
      quiet: {},
    });
    await expect(
      setOutputs(store.pool, { taskRunId: retry.id, fence: retry.fence - 1, outputs: { rows: 'zombie' } }),
    ).rejects.toBeInstanceOf(StaleFenceError);
  });

  it('records metrics with their tags', async () => {
    await queueOne(store.pool, execution);
    const run = await claimOne(store.pool);
    const ref = { taskRunId: run.id, fence: run.fence };
    expect(
      await addMetrics(store.pool, {
        ...ref,
        metrics: [
          { name: 'rows', value: 42, tags: { table: 'users' } },
          { name: 'seconds', value: 1.5, tags: {} },
        ],
      }),
    ).toBe(2);
    const metrics = await listMetrics(store.pool, run.id);
    expect(metrics.map(({ name, value, tags }) => ({ name, value, tags }))).toEqual([
      { name: 'rows', value: 42, tags: { table: 'users' } },
      { name: 'seconds', value: 1.5, tags: {} },
    ]);
  });

  it('stores, replaces, lists and sums artifacts', async () => {
    await queueOne(store.pool, execution);
    const run = await claimOne(store.pool);
    const ref = { taskRunId: run.id, fence: run.fence };
    await putArtifact(store.pool, { ...ref, name: 'report.csv', content: Buffer.from('a,b\n1,2\n') });
    await putArtifact(store.pool, { ...ref, name: 'bin/data', content: Buffer.from([0, 1, 2, 255]) });
    await putArtifact(store.pool, { ...ref, name: 'report.csv', content: Buffer.from('a,b\n') });

    expect((await listArtifacts(store.pool, run.id)).map(({ name, size }) => ({ name, size }))).toEqual([
      { name: 'bin/data', size: 4 },
      { name: 'report.csv', size: 4 },
    ]);
    expect(await artifactsTotalSize(store.pool, run.id)).toBe(8);
    expect((await getArtifact(store.pool, run.id, 'bin/data'))?.content).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(await getArtifact(store.pool, run.id, 'missing')).toBeNull();
    await expect(
      putArtifact(store.pool, { ...ref, fence: 0, name: 'x', content: Buffer.alloc(1) }),
    ).rejects.toBeInstanceOf(StaleFenceError);
  });
});
