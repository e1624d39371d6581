import { CODES, parseFlow } from '@sluice/flows';
import { codesAndPaths, CTX, DESIGN_EXAMPLE, errorsOf, parseOk } from './helpers';

describe('parseFlow on the example of docs/flow-file.md', () => {
  it('parses it, with flow policies in engine units and the id and namespace from the file location', () => {
    const flow = parseOk(DESIGN_EXAMPLE);
    expect(flow).toMatchObject({
      id: 'nightly',
      namespace: 'team',
      executor: { type: 'process', pool: 'default' },
      retry: { maxAttempts: 3, backoffMs: 10_000 },
      timeoutMs: 30 * 60_000,
      concurrency: 2,
      maxParallel: 4,
      schedule: '*/5 * * * *',
    });
    expect(flow.tasks.map((t) => [t.id, t.type])).toEqual([
      ['fetch', 'command'],
      ['report', 'script'],
      ['notify', 'http'],
    ]);
    expect(flow.tasks[0]).toMatchObject({
      command: ['sh', '-c', 'echo rows=42 >> "$SLUICE_OUTPUTS"'],
      env: { API_TOKEN: { secret: 'api-token' } },
    });
    expect(flow.tasks[1]).toMatchObject({
      interpreter: 'bash',
      script: 'echo "fetched {{ outputs.fetch.rows }} rows"\n',
      depends_on: ['fetch'],
      executor: { type: 'docker', image: 'debian:bookworm-slim', resources: { cpu: '0.5', memory: '256Mi' } },
    });
    expect(flow.tasks[2]).toMatchObject({
      request: {
        method: 'POST',
        url: 'https://example.test/hook',
        body: { rows: '{{ outputs.fetch.rows }}' },
      },
    });
  });
});

describe('parseFlow fills defaults and normalises', () => {
  const flow = parseOk(`
tasks:
  - id: s
    type: script
    script: echo hi
    timeout: 1h30m
    retry: { max_attempts: 2 }
    env: { PORT: 8080, DEBUG: true }
  - id: h
    type: http
    request: { url: "https://example.test/", method: patch, expected_status: [200, 204] }
  - id: sub
    type: subflow
    flow: other-ns/load
  - id: c
    type: command
    command: [sleep, 5]
`);

  it('defaults the interpreter to bash, the method to GET (upper-casing a given one) and subflow wait to true', () => {
    expect(flow.tasks[0]).toMatchObject({
      interpreter: 'bash',
      timeoutMs: 5_400_000,
      retry: { maxAttempts: 2, backoffMs: 0 },
    });
    expect(flow.tasks[1]).toMatchObject({ request: { method: 'PATCH', expected_status: [200, 204] } });
    expect(flow.tasks[2]).toMatchObject({ flow: 'other-ns/load', wait: true });
  });

  it('takes YAML numbers and booleans in env and command as the text the author wrote', () => {
    expect(flow.tasks[0]).toMatchObject({ env: { PORT: '8080', DEBUG: 'true' } });
    expect(flow.tasks[3]).toMatchObject({ command: ['sleep', '5'] });
  });

  it('leaves optional flow fields out instead of setting them to undefined', () => {
    expect(Object.keys(flow)).toEqual(['id', 'namespace', 'tasks']);
  });
});

describe('parseFlow errors, each with its exact path', () => {
  const LS = 'id: a, type: command, command: [ls]';
  /** A flow of one task written as a flow mapping, after optional flow-level lines. */
  const one = (task: string, flowLines = '') => `${flowLines}\ntasks:\n  - { ${task} }\n`;

  it.each([
    ['required', 'tasks', 'schedule: "0 * * * *"'],
    ['required', 'tasks[0].command', one('id: a, type: command')],
    ['required', 'tasks[0].type', one('id: a')],
    ['required', 'tasks[0].id', one('type: command, command: [ls]')],
    ['invalid_type', 'tasks[0].command[1]', one('id: a, type: command, command: [ls, [x]]')],
    ['invalid_type', 'max_parallel', one(LS, 'max_parallel: lots')],
    ['invalid_value', 'concurrency', one(LS, 'concurrency: 0')],
    ['invalid_value', 'tasks[0].interpreter', one('id: a, type: script, interpreter: perl, script: x')],
    ['invalid_value', 'tasks[0].id', one('id: 1st, type: command, command: [ls]')],
    ['invalid_value', 'tasks', 'tasks: []'],
    ['unknown_field', 'tasks[0].depnds_on', one(`${LS}, depnds_on: []`)],
    ['unknown_field', 'tasks[0].executor.imgae', one(`${LS}, executor: { imgae: x }`)],
    ['unknown_field', 'scheduel', one(LS, 'scheduel: "0 * * * *"')],
    ['unknown_task_type', 'tasks[0].type', one('id: a, type: shell, command: [ls]')],
    ['invalid_duration', 'tasks[0].timeout', one(`${LS}, timeout: 5 minutes`)],
    ['invalid_duration', 'retry.backoff', one(LS, 'retry: { max_attempts: 2, backoff: soon }')],
    ['invalid_duration', 'timeout', one(LS, 'timeout: 0s')],
    ['invalid_cron', 'schedule', one(LS, 'schedule: "every day"')],
    ['invalid_cron', 'schedule', one(LS, 'schedule: "61 * * * *"')],
    ['invalid_executor_type', 'executor.type', one(LS, 'executor: { type: inline }')],
    ['invalid_executor_type', 'tasks[0].executor.type', one(`${LS}, executor: { type: lambda }`)],
    [
      'executor_not_allowed',
      'tasks[0].executor',
      one('id: a, type: http, request: { url: "http://x.test" }, executor: { pool: gpu }'),
    ],
    [
      'executor_not_allowed',
      'tasks[0].executor',
      one('id: a, type: subflow, flow: other, executor: { type: docker }'),
    ],
    [
      'field_not_allowed',
      'tasks[0].executor.pull',
      one(`${LS}, executor: { type: kubernetes, image: x, pull: always }`),
    ],
    [
      'invalid_value',
      'tasks[0].executor.resources.memory',
      one(`${LS}, executor: { type: docker, image: x, resources: { memory: lots } }`),
    ],
    ['invalid_value', 'tasks[0].executor.pool', one(`${LS}, executor: { pool: "gpu,cpu" }`)],
    ['invalid_value', 'tasks[0].env.SLUICE_RUN_TOKEN', one(`${LS}, env: { SLUICE_RUN_TOKEN: x }`)],
    ['invalid_value', 'tasks[0].request.url', one('id: a, type: http, request: { url: "/relative" }')],
    ['invalid_value', 'tasks[0].flow', one('id: a, type: subflow, flow: nightly')],
    ['invalid_value', 'id', one(LS, 'id: daily')],
  ])('%s at %s', (code, path, yaml) => {
    expect(codesAndPaths(errorsOf(yaml))).toEqual([[code, path]]);
  });

  it('names the field it expected when one looks like a typo', () => {
    const [error] = errorsOf('tasks:\n  - { id: a, type: command, command: [ls], depnds_on: [] }');
    expect(error?.message).toBe('unknown field "depnds_on" (did you mean "depends_on"?)');
  });

  it('says what a secret reference looks like when it is misspelt', () => {
    const errors = errorsOf('tasks:\n  - { id: a, type: command, command: [ls], env: { T: { secrt: x } } }');
    expect(codesAndPaths(errors)).toEqual([
      ['required', 'tasks[0].env.T.secret'],
      ['unknown_field', 'tasks[0].env.T.secrt'],
    ]);
    expect(errors[1]?.message).toBe('unknown field "secrt" (did you mean "secret"?)');
  });

  it('documents every code it can report', () => {
    expect(Object.keys(CODES).sort()).toEqual(
      [
        'yaml_syntax',
        'yaml_too_complex',
        'required',
        'invalid_type',
        'invalid_value',
        'unknown_field',
        'unknown_task_type',
        'duplicate_task_id',
        'unknown_dependency',
        'dependency_cycle',
        'invalid_duration',
        'invalid_cron',
        'invalid_reference',
        'image_required',
        'field_not_allowed',
        'executor_not_allowed',
        'invalid_executor_type',
        'executor_type_not_allowed',
        'input_required',
        'invalid_input_type',
        'unknown_input',
        'scheduled_required_input',
      ].sort(),
    );
  });
});

describe('parseFlow reports every problem at once', () => {
  it('collects errors from the flow level, several tasks and the task graph in one result', () => {
    const errors = errorsOf(`
timeout: forever
max_paralel: 2
tasks:
  - id: fetch
    type: command
    command: []
  - id: load
    type: script
    script: echo {{ outputs.fetch.rows }}
    depends_on: [fecth]
  - id: load
    type: http
    request: { url: "https://example.test", method: FETCH }
`);
    expect(codesAndPaths(errors)).toEqual([
      ['invalid_duration', 'timeout'],
      ['unknown_field', 'max_paralel'],
      ['invalid_value', 'tasks[0].command'],
      ['invalid_value', 'tasks[2].request.method'],
      ['duplicate_task_id', 'tasks[2].id'],
      ['unknown_dependency', 'tasks[1].depends_on[0]'],
      ['invalid_reference', 'tasks[1].script'],
    ]);
    expect(errors.find((e) => e.code === 'unknown_dependency')?.message).toContain('did you mean "fetch"?');
  });
});

describe('malformed YAML', () => {
  it('is one yaml_syntax issue per problem, at the empty path, with line and column', () => {
    const result = parseFlow('tasks:\n  - id: a\n    command: [ls, "x]\n', CTX);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.length).toBeGreaterThan(0);
    for (const error of result.errors) {
      expect(error).toMatchObject({ code: 'yaml_syntax', path: '' });
      expect(error.message).toMatch(/\(line \d+, column \d+\)/);
    }
  });

  it('points at the usual cause of an unquoted cron schedule', () => {
    const [error] = errorsOf('schedule: */5 * * * *\ntasks: []\n');
    expect(error).toMatchObject({ code: 'yaml_syntax', path: '' });
    expect(error?.message).toContain('quote values that start with "*"');
    expect(error?.message).toContain('(line 1, column');
  });

  it('rejects duplicate keys, which YAML parsers otherwise resolve silently', () => {
    expect(codesAndPaths(errorsOf('tasks: []\ntasks: []\n'))).toEqual([['yaml_syntax', '']]);
  });

  it('treats a file that is not a mapping as a type error and an empty one as missing tasks', () => {
    expect(codesAndPaths(errorsOf('- a\n- b\n'))).toEqual([['invalid_type', '']]);
    expect(codesAndPaths(errorsOf(''))).toEqual([['required', 'tasks']]);
  });
});
