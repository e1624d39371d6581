import { ended, useStandaloneServer } from './standalone';

/*
 * The engine tells the runner which env values are resolved secrets; the
 * runner masks them, and their encoded forms, in everything it sends back
 * (docs/secrets.md). End to end: a process task that prints its secret every
 * way it can, on a real standalone server.
 */
const SECRET_VALUE = 'sk/live+7f3a 9c=1e&5b';

const fixture = useStandaloneServer();

const FLOW = `
tasks:
  - id: leak
    type: script
    interpreter: sh
    env:
      API_TOKEN: { secret: api-token }
    script: |
      echo "plain $API_TOKEN"
      echo "stderr $API_TOKEN" >&2
      printf %s "$API_TOKEN" | base64
      node -e 'console.log("url " + encodeURIComponent(process.env.API_TOKEN))'
      echo "token=$API_TOKEN" >> "$SLUICE_OUTPUTS"
      echo done
`;

test('a resolved secret reaches the task but never its logs or outputs, plain, base64 or URL-encoded', async () => {
  const { api } = fixture;
  expect((await api.putSecret('masking', 'api-token', SECRET_VALUE)).status).toBe(204);
  expect((await api.putFlow('masking', 'leak', FLOW)).status).toBe(200);
  const execution = await api.waitFor(await api.run('masking', 'leak'), ended);
  expect(execution.state).toBe('SUCCEEDED');
  const run = execution.taskRuns[0]!;
  const lines = (await api.logs(run.id)).map((l) => l.line);
  expect(lines).toEqual(expect.arrayContaining(['plain ***', 'stderr ***', '***', 'url ***', 'done']));
  const everything = JSON.stringify({ lines, run });
  for (const form of [
    SECRET_VALUE,
    Buffer.from(SECRET_VALUE).toString('base64'),
    encodeURIComponent(SECRET_VALUE),
  ]) {
    expect(everything).not.toContain(form);
  }
  expect(run.outputs).toEqual({ token: '***' });
});
