import { Client } from 'pg';
import { ended, useStandaloneServer } from './standalone';

// Flow inputs on a real standalone server (docs/flow-file.md#inputs): tasks read
// {{ inputs.x }}, and a subflow task hands its rendered inputs to the child.
const fixture = useStandaloneServer();

const GREET = `
inputs:
  name: { type: string, required: true }
  times: { type: number, default: 2 }
  cfg: { type: object, default: { a: 1 } }
tasks:
  - id: hello
    type: command
    command: ["echo", "hello {{ inputs.name }}", "x{{ inputs.times }}", "{{ inputs.cfg }}"]
  - id: env
    type: script
    interpreter: sh
    env: { GREETING: "{{ inputs.name }}" }
    script: echo "env=$GREETING"
`;

const CHILD = `
inputs:
  name: { type: string, required: true }
  n: { type: number, required: true }
  flag: { type: boolean, default: false }
tasks:
  - id: show
    type: command
    command: ["echo", "child got {{ inputs.name }} {{ inputs.n }} {{ inputs.flag }}"]
`;

const PARENT = (n: string) => `
inputs:
  who: { type: string, required: true }
tasks:
  - id: mk
    type: command
    command: ["sh", "-c", "echo n=7 >> \\"$SLUICE_OUTPUTS\\""]
  - id: call
    type: subflow
    flow: child
    depends_on: [mk]
    inputs: { name: "{{ inputs.who }}", n: "${n}", flag: true }
`;

async function start(ns: string, flow: string, inputs: Record<string, unknown>): Promise<string> {
  const res = await fixture.api.call('POST', `/api/v1/namespaces/${ns}/flows/${flow}/executions`, { inputs });
  if (res.status !== 201) throw new Error(`start ${flow}: ${res.status} ${JSON.stringify(res.body)}`);
  return String(res.body.id);
}

const lineTexts = async (taskRunId: string) => (await fixture.api.logs(taskRunId)).map((l) => l.line);

async function childrenOf(taskRunId: string): Promise<Array<{ id: string; inputs: unknown }>> {
  const db = new Client({ connectionString: fixture.db.url });
  await db.connect();
  try {
    const { rows } = await db.query<{ id: string; inputs: unknown }>(
      'SELECT id, inputs FROM executions WHERE parent_task_run_id = $1',
      [taskRunId],
    );
    return rows;
  } finally {
    await db.end();
  }
}

test('a command and a script read {{ inputs.x }}; defaults apply; the execution shows its inputs', async () => {
  const { api } = fixture;
  expect((await api.putFlow('inputs', 'greet', GREET)).status).toBe(200);
  const execution = await api.waitFor(await start('inputs', 'greet', { name: 'Ada' }), ended);
  expect(execution.state).toBe('SUCCEEDED');
  expect((execution as unknown as { inputs: unknown }).inputs).toEqual({
    name: 'Ada',
    times: 2,
    cfg: { a: 1 },
  });
  const [hello, env] = ['hello', 'env'].map((id) => execution.taskRuns.find((r) => r.taskId === id)!);
  expect(await lineTexts(hello!.id)).toContain('hello Ada x2 {"a":1}');
  expect(await lineTexts(env!.id)).toContain('env=Ada');
});

test("a subflow's child reads the inputs its parent passed, rendered from the parent's inputs and outputs", async () => {
  const { api } = fixture;
  expect((await api.putFlow('inputs', 'child', CHILD)).status).toBe(200);
  expect((await api.putFlow('inputs', 'parent', PARENT('{{ outputs.mk.n }}'))).status).toBe(200);
  const parent = await api.waitFor(await start('inputs', 'parent', { who: 'Grace' }), ended);
  expect(parent.state).toBe('SUCCEEDED');
  const call = parent.taskRuns.find((r) => r.taskId === 'call')!;
  const children = await childrenOf(call.id);
  expect(children).toHaveLength(1);
  // Converted to the child's declared types: "7" from the output is the number 7.
  expect(children[0]!.inputs).toEqual({ name: 'Grace', n: 7, flag: true });
  const child = await api.waitFor(children[0]!.id, ended);
  expect(child.state).toBe('SUCCEEDED');
  expect(await lineTexts(child.taskRuns[0]!.id)).toContain('child got Grace 7 true');
});

test('a subflow value of the wrong type fails the subflow task with the reason, and no child is created', async () => {
  const { api } = fixture;
  expect((await api.putFlow('inputs', 'child', CHILD)).status).toBe(200);
  expect((await api.putFlow('inputs', 'bad-parent', PARENT('seven'))).status).toBe(200);
  const parent = await api.waitFor(await start('inputs', 'bad-parent', { who: 'Linus' }), ended);
  expect(parent.state).toBe('FAILED');
  const call = parent.taskRuns.find((r) => r.taskId === 'call')!;
  expect(call.state).toBe('FAILED');
  const detail = await api.call('GET', `/api/v1/executions/${parent.id}/task-runs`);
  const error = (detail.body.taskRuns as Array<{ taskId: string; error: string | null }>).find(
    (r) => r.taskId === 'call',
  )?.error;
  expect(error).toContain('inputs.n: expected a number, got the string "seven"');
  expect(await childrenOf(call.id)).toEqual([]);
});
