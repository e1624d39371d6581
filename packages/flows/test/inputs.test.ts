import { renderTemplates, resolveInputs, templateInputs, TemplateError } from '@sluice/flows';
import { codesAndPaths, errorsOf, parseOk } from './helpers';

const DECLARED = `
inputs:
  day:
    type: string
    required: true
    description: The day to load, YYYY-MM-DD
  count: { type: number, default: 10 }
  dry_run: { type: boolean, default: "false" }
  options: { type: object, default: { mode: fast } }
  note: { type: string }
tasks:
  - id: load
    type: command
    command: ["echo", "{{ inputs.day }}", "{{ inputs.count }}", "{{ inputs.options }}"]
    env: { DRY_RUN: "{{ inputs.dry_run }}", NOTE: "{{inputs.note}}" }
`;

describe('an inputs declaration', () => {
  it('parses, with required false by default and the defaults converted to their type', () => {
    expect(parseOk(DECLARED).inputs).toEqual({
      day: { type: 'string', required: true, description: 'The day to load, YYYY-MM-DD' },
      count: { type: 'number', required: false, default: 10 },
      dry_run: { type: 'boolean', required: false, default: false },
      options: { type: 'object', required: false, default: { mode: 'fast' } },
      note: { type: 'string', required: false },
    });
  });

  it('refuses a default of the wrong type, at its path', () => {
    const errors = errorsOf(`
inputs:
  count: { type: number, default: many }
  port: { type: string, default: 8080 }
  options: { type: object, default: [1, 2] }
tasks: [{ id: a, type: command, command: ["true"] }]
`);
    expect(codesAndPaths(errors)).toEqual([
      ['invalid_input_type', 'inputs.count.default'],
      ['invalid_input_type', 'inputs.port.default'],
      ['invalid_input_type', 'inputs.options.default'],
    ]);
    expect(errors[0]?.message).toBe('the default expected a number, got the string "many"');
    expect(errors[1]?.message).toContain('quote it in YAML');
  });

  it('refuses a bad name, an unknown type, a misspelt field and a default on a required input', () => {
    const errors = errorsOf(`
inputs:
  1st: { type: string }
  day: { type: date }
  count: { type: number, requird: true }
  mode: { type: string, required: true, default: fast }
tasks: [{ id: a, type: command, command: ["true"] }]
`);
    expect(codesAndPaths(errors)).toEqual(
      expect.arrayContaining([
        ['invalid_value', 'inputs["1st"]'],
        ['invalid_value', 'inputs.day.type'],
        ['unknown_field', 'inputs.count.requird'],
        ['invalid_value', 'inputs.mode.default'],
      ]),
    );
  });

  it('refuses a required input on a scheduled flow: scheduled executions have only the defaults', () => {
    const errors = errorsOf(`
schedule: "0 3 * * *"
inputs:
  day: { type: string, required: true }
  count: { type: number, default: 1 }
tasks: [{ id: a, type: command, command: ["echo", "{{ inputs.day }}"] }]
`);
    expect(codesAndPaths(errors)).toEqual([['scheduled_required_input', 'inputs.day.required']]);
  });

  it('makes a template of an undeclared input a validation error, with a hint', () => {
    const errors = errorsOf(`
inputs:
  day: { type: string }
tasks:
  - id: a
    type: script
    script: echo {{ inputs.dya }}
  - id: b
    type: subflow
    flow: child
    inputs: { day: "{{ inputs.day }}", n: "{{ inputs.count }}" }
`);
    expect(codesAndPaths(errors)).toEqual([
      ['invalid_reference', 'tasks[0].script'],
      ['invalid_reference', 'tasks[1].inputs.n'],
    ]);
    expect(errors[0]?.message).toBe(
      'no input "dya" in this flow\'s inputs (did you mean "day"?); declared: day',
    );
  });

  it('is optional: a flow without inputs cannot read one', () => {
    const errors = errorsOf('tasks: [{ id: a, type: command, command: ["echo", "{{ inputs.x }}"] }]');
    expect(codesAndPaths(errors)).toEqual([['invalid_reference', 'tasks[0].command[1]']]);
    expect(errors[0]?.message).toContain('the flow declares no inputs');
  });
});

describe('resolveInputs', () => {
  const flow = parseOk(DECLARED);

  it('fills in the defaults and converts text to the declared type', () => {
    expect(resolveInputs(flow.inputs, { day: '2026-12-01', count: '5', options: '{"a":1}' })).toEqual({
      ok: true,
      inputs: { day: '2026-12-01', count: 5, dry_run: false, options: { a: 1 } },
    });
  });

  it('reports a missing required input, a wrong type and an unknown input at once', () => {
    const result = resolveInputs(flow.inputs, { count: 'many', dry_run: 1, options: [1], days: 'x' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => [i.code, i.path])).toEqual([
      ['input_required', 'inputs.day'],
      ['invalid_input_type', 'inputs.count'],
      ['invalid_input_type', 'inputs.dry_run'],
      ['invalid_input_type', 'inputs.options'],
      ['unknown_input', 'inputs.days'],
    ]);
    expect(result.issues[4]?.message).toContain('did you mean "day"?');
  });

  it('refuses a string input given as a number, and any input to a flow that declares none', () => {
    expect(resolveInputs(flow.inputs, { day: 20261201 })).toMatchObject({
      ok: false,
      issues: [{ code: 'invalid_input_type', path: 'inputs.day' }],
    });
    expect(resolveInputs(undefined, { x: 1 })).toMatchObject({
      ok: false,
      issues: [{ code: 'unknown_input', path: 'inputs.x' }],
    });
    expect(resolveInputs(undefined, null)).toEqual({ ok: true, inputs: {} });
  });
});

describe('rendering {{ inputs.<name> }}', () => {
  const flow = parseOk(DECLARED);

  it('writes strings as they are, numbers, booleans and objects as JSON, and an absent optional input as ""', () => {
    const resolved = resolveInputs(flow.inputs, { day: '2026-12-01' });
    if (!resolved.ok) throw new Error('expected inputs to resolve');
    const inputs = templateInputs(flow.inputs, resolved.inputs);
    expect(renderTemplates(flow.tasks[0], { outputs: {}, inputs })).toMatchObject({
      command: ['echo', '2026-12-01', '10', '{"mode":"fast"}'],
      env: { DRY_RUN: 'false', NOTE: '' },
    });
  });

  it('fails with a TemplateError for an input the context does not have', () => {
    expect(() => renderTemplates('{{ inputs.day }}', { outputs: {}, inputs: {} })).toThrow(TemplateError);
  });
});
