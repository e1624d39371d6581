import request from 'supertest';
import { getSyncState, listSyncCommits } from '@sluice/store';
import {
  startApiHarness,
  putFlow,
  putSecret,
  claimWithToken,
  runnerPath,
  WORKSPACE,
  type ApiHarness,
} from './harness';

// The runner API's sync part (docs/connectors.md#sync): the spec carries both
// configs with secrets resolved and the committed state; a commit is fenced.

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness({ defaultRetryBackoffMs: 0 });
  const flow = [
    'retry: { max_attempts: 2 }',
    'tasks:',
    '  - id: move',
    '    type: sync',
    '    source: { command: [src], config: { password: { secret: src-pass }, n: 3 } }',
    '    destination: { command: [dst], config: { table: t } }',
    '    catalog: { streams: [] }',
  ].join('\n');
  expect((await putFlow(h, 'ns', 'conn', flow)).status).toBe(200);
  expect((await putSecret(h, 'ns', 'src-pass', 'the-source-password')).status).toBe(204);
});
afterAll(() => h.close());

const state = (cursor: number) => ({
  type: 'STATE',
  state: { type: 'STREAM', stream: { stream_descriptor: { name: 'users' }, stream_state: { cursor } } },
});

it('serves the sync spec with resolved configs and the committed state; commits are fenced', async () => {
  await h.engine.createExecution({ workspace: WORKSPACE, namespace: 'ns', flowId: 'conn' });
  const [run] = await claimWithToken(h);
  if (!run) throw new Error('nothing claimed');
  const auth = `Bearer ${run.token}`;
  const spec = await request(h.internalApp).get(runnerPath(run.row.id, 'spec')).set('Authorization', auth);
  expect(spec.status).toBe(200);
  expect(spec.body.task).toEqual({
    type: 'sync',
    source: { command: ['src'], config: { password: 'the-source-password', n: 3 } },
    destination: { command: ['dst'], config: { table: 't' } },
    catalog: { streams: [] },
    committedState: [],
  });
  expect(spec.body.secretValues).toContain('the-source-password');

  const commit = (sequence: number, cursor: number, fence = run.row.fence) =>
    request(h.internalApp)
      .post(runnerPath(run.row.id, 'sync/state'))
      .set('Authorization', auth)
      .send({ fence, sequence, message: state(cursor), streams: { users: { records: 5, bytes: 50 } } });
  expect((await commit(1, 10)).body).toEqual({ committed: true });
  // A resent commit (its answer was lost) changes nothing.
  expect((await commit(1, 10)).body).toEqual({ committed: false });
  expect((await commit(2, 20, run.row.fence + 1)).status).toBe(409);
  const bad = await request(h.internalApp)
    .post(runnerPath(run.row.id, 'sync/state'))
    .set('Authorization', auth)
    .send({
      fence: run.row.fence,
      sequence: 2,
      message: { type: 'STATE', state: { type: 'STREAM' } },
      streams: {},
    });
  expect(bad.status).toBe(400);

  const key = { workspace: WORKSPACE, namespace: 'ns', flowId: 'conn', taskId: 'move' };
  expect((await getSyncState(h.pool, key)).map((s) => JSON.parse(s.state))).toEqual([state(10).state]);
  expect((await listSyncCommits(h.pool, key, { limit: 10 })).map((c) => [c.sequence, c.records])).toEqual([
    [1, 5],
  ]);

  // The watchdog takes the run away: the zombie's commit is refused, the next attempt starts from the state.
  await h.pool.query(`UPDATE task_runs SET heartbeat_at = now() - interval '1 minute' WHERE id = $1`, [
    run.row.id,
  ]);
  expect(await h.engine.sweepLostTaskRuns(30_000)).toBe(1);
  await h.engine.processPendingEvents();
  expect((await commit(2, 30)).status).toBe(409);
  const [retry] = await claimWithToken(h);
  if (!retry) throw new Error('no retry claimed');
  const next = await request(h.internalApp)
    .get(runnerPath(retry.row.id, 'spec'))
    .set('Authorization', `Bearer ${retry.token}`);
  expect(next.body.attempt).toBe(2);
  expect(next.body.task.committedState).toEqual([
    {
      stateType: 'STREAM',
      stream: { name: 'users', namespace: null },
      state: JSON.stringify(state(10).state),
    },
  ]);
});
