import { Client } from 'pg';
import { ended, useStandaloneServer } from './standalone';

/*
 * A namespace file whose path escapes the work dir makes the runner refuse
 * every snapshot of that namespace. That is a deterministic failure: the task
 * run ends FAILED with reason `invalid_task` after one attempt, not three
 * `exit_code` attempts of the same error. The API refuses such paths now, so
 * the file is written straight into the database, as an older server stored it.
 */

const fixture = useStandaloneServer({ PIPELINE_DEFAULT_MAX_ATTEMPTS: '3' });

test('a snapshot the runner refuses fails the task run once with reason invalid_task', async () => {
  const { api } = fixture;
  const flow = `
retry:
  max_attempts: 3
  backoff: 1s
tasks:
  - id: uses-files
    type: command
    command: ["sh", "-c", "echo ran"]
`;
  expect((await api.putFlow('refused', 'uses-files', flow)).status).toBeLessThan(300);
  const client = new Client({ connectionString: fixture.db.url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO namespace_files (workspace, namespace, path, content, sha256) VALUES ('w', 'refused', '../x', 'outside', 'none')`,
    );
  } finally {
    await client.end();
  }

  const id = await api.run('refused', 'uses-files');
  const execution = await api.waitFor(id, ended);
  // Time for a retry to be queued, were one coming (the backoff is 1 s).
  await new Promise((r) => setTimeout(r, 2_500));
  const settled = await api.execution(id);

  expect(settled.state).toBe('FAILED');
  expect(settled.taskRuns.map((r) => [r.taskId, r.attempt, r.state, r.reason])).toEqual([
    ['uses-files', 1, 'FAILED', 'invalid_task'],
  ]);
  expect(execution.taskRuns).toHaveLength(1);
  // The error names the refused path.
  const raw = (await api.call('GET', `/api/v1/executions/${id}`)).body.taskRuns as Array<{ error: string }>;
  expect(raw[0]!.error).toContain('../x: path escapes the work dir');
  const logs = await api.logs(settled.taskRuns[0]!.id);
  expect(logs.map((l) => l.line)).not.toContain('ran');
});
