import request from 'supertest';
import { putFlow, startApiHarness, type ApiHarness } from './harness';

/*
 * Flow inputs through the public API (docs/api.md#starting-an-execution): the
 * POST body's inputs are checked against the flow's declaration; a refused
 * start is a 422 at `inputs.<name>` and creates nothing.
 */
let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness();
  expect((await putFlow(h, 'inp', 'load', FLOW)).status).toBe(200);
});
afterAll(() => h.close());

const FLOW = `
inputs:
  day: { type: string, required: true, description: The day to load }
  count: { type: number, default: 3 }
  options: { type: object }
tasks:
  - id: load
    type: command
    command: ["echo", "{{ inputs.day }}", "{{ inputs.count }}", "{{ inputs.options }}"]
`;

const start = (body?: unknown, flow = 'load') => {
  const call = request(h.publicApp)
    .post(`/api/v1/namespaces/inp/flows/${flow}/executions`)
    .set('Authorization', `Bearer ${h.memberToken}`);
  return body === undefined ? call : call.send(body as object);
};

async function rowCounts(): Promise<Record<string, number>> {
  const { rows } = await h.pool.query<{ executions: string; task_runs: string; events: string }>(
    `SELECT (SELECT count(*) FROM executions) AS executions, (SELECT count(*) FROM task_runs) AS task_runs,
            (SELECT count(*) FROM events) AS events`,
  );
  const row = rows[0]!;
  return { executions: +row.executions, task_runs: +row.task_runs, events: +row.events };
}

describe('POST /namespaces/{ns}/flows/{flow}/executions with inputs', () => {
  it('refuses a missing required input, a wrong type and an unknown input with 422, creating nothing', async () => {
    const before = await rowCounts();

    const missing = await start();
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([
      { code: 'input_required', path: 'inputs.day', message: 'input "day" (a string) is required' },
    ]);

    const wrong = await start({ inputs: { day: '2026-12-01', count: 'many', options: [1] } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toEqual([
      {
        code: 'invalid_input_type',
        path: 'inputs.count',
        message: 'expected a number, got the string "many"',
      },
      { code: 'invalid_input_type', path: 'inputs.options', message: expect.stringContaining('a list') },
    ]);

    const unknown = await start({ inputs: { day: '2026-12-01', dya: 'x' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([
      expect.objectContaining({ code: 'unknown_input', path: 'inputs.dya' }),
    ]);

    expect(await rowCounts()).toEqual(before);
  });

  it('refuses a body of another shape with 400', async () => {
    expect((await start({ inputs: ['day'] })).body.error.code).toBe('invalid_request');
    expect((await start({ input: { day: 'x' } })).status).toBe(400);
  });

  it('applies the defaults, converts text, stores the inputs and shows them on the execution', async () => {
    const res = await start({ inputs: { day: '2026-12-01', options: '{"mode":"fast"}' } });
    expect(res.status).toBe(201);
    const expected = { day: '2026-12-01', count: 3, options: { mode: 'fast' } };
    const got = await request(h.publicApp)
      .get(`/api/v1/executions/${res.body.id as string}`)
      .set('Authorization', `Bearer ${h.memberToken}`);
    expect(got.body.inputs).toEqual(expected);
    const list = await request(h.publicApp)
      .get('/api/v1/executions?namespace=inp&flow=load&limit=1')
      .set('Authorization', `Bearer ${h.memberToken}`);
    expect(list.body.executions[0]).toMatchObject({ id: res.body.id, inputs: expected });
    // The queued task run's spec has the inputs rendered in: numbers and objects as JSON.
    const spec = await h.pool.query<{ spec: { command: string[] } }>(
      'SELECT spec FROM task_runs WHERE execution_id = $1',
      [res.body.id],
    );
    expect(spec.rows[0]?.spec.command).toEqual(['echo', '2026-12-01', '3', '{"mode":"fast"}']);
  });

  it('starts a flow without inputs with an empty body, and shows inputs as {}', async () => {
    expect(
      (await putFlow(h, 'inp', 'plain', 'tasks: [{ id: a, type: command, command: ["true"] }]')).status,
    ).toBe(200);
    const res = await start(undefined, 'plain');
    expect(res.status).toBe(201);
    const got = await request(h.publicApp)
      .get(`/api/v1/executions/${res.body.id as string}`)
      .set('Authorization', `Bearer ${h.memberToken}`);
    expect(got.body.inputs).toEqual({});
    expect((await start({ inputs: { day: 'x' } }, 'plain')).body.errors).toEqual([
      expect.objectContaining({ code: 'unknown_input', path: 'inputs.day' }),
    ]);
  });
});

describe('PUT of a flow with inputs', () => {
  it('is a 422 for an undeclared {{ inputs.x }} and for a default of the wrong type, at their paths', async () => {
    const res = await putFlow(
      h,
      'inp',
      'bad',
      `
inputs:
  count: { type: number, default: many }
tasks:
  - { id: a, type: command, command: ["echo", "{{ inputs.cuont }}"] }
`,
    );
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      expect.objectContaining({ code: 'invalid_input_type', path: 'inputs.count.default' }),
      expect.objectContaining({
        code: 'invalid_reference',
        path: 'tasks[0].command[1]',
        message: expect.stringContaining('did you mean "count"?'),
      }),
    ]);
  });

  it('is a 422 for a required input on a scheduled flow', async () => {
    const res = await putFlow(
      h,
      'inp',
      'nightly',
      'schedule: "0 3 * * *"\ninputs: { day: { type: string, required: true } }\ntasks: [{ id: a, type: command, command: ["true"] }]\n',
    );
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      expect.objectContaining({ code: 'scheduled_required_input', path: 'inputs.day.required' }),
    ]);
  });
});
