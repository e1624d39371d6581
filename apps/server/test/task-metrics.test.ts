import { ended, useStandaloneServer } from './standalone';

// A task's metrics ($SLUICE_METRICS, one JSON object a line) are readable from the public API.
const fixture = useStandaloneServer();

const FLOW = `
tasks:
  - id: measure
    type: script
    interpreter: sh
    script: |
      echo '{"name":"rows","value":42,"tags":{"table":"users"}}' >> "$SLUICE_METRICS"
      echo '{"name":"seconds","value":1.5}' >> "$SLUICE_METRICS"
`;

test('GET /task-runs/{id}/metrics lists what the task reported, in order', async () => {
  const { api } = fixture;
  expect((await api.putFlow('metrics', 'measure', FLOW)).status).toBe(200);
  const execution = await api.waitFor(await api.run('metrics', 'measure'), ended);
  expect(execution.state).toBe('SUCCEEDED');
  const res = await api.call('GET', `/api/v1/task-runs/${execution.taskRuns[0]!.id}/metrics`);
  expect(res.status).toBe(200);
  expect(res.body.metrics).toEqual([
    expect.objectContaining({ name: 'rows', value: 42, tags: { table: 'users' } }),
    expect.objectContaining({ name: 'seconds', value: 1.5, tags: {} }),
  ]);
});
