import { dependentsOf, downstreamOf, isReady, roots, topologicalOrder } from '@sluice/flows';
import { checkTaskGraph } from '../src/graph-checks';
import { codesAndPaths, errorsOf, parseOk } from './helpers';

const task = (id: string, dependsOn: string[] = [], script = 'true') =>
  `  - id: ${id}\n    type: script\n    script: ${JSON.stringify(script)}\n    depends_on: ${JSON.stringify(dependsOn)}\n`;

describe('task ids and depends_on', () => {
  it('reports a duplicate id at the later task, naming the first', () => {
    const errors = errorsOf(`tasks:\n${task('a')}${task('b')}${task('a')}`);
    expect(codesAndPaths(errors)).toEqual([['duplicate_task_id', 'tasks[2].id']]);
    expect(errors[0]?.message).toBe('task id "a" is already used by tasks[0]');
  });

  it('reports each unknown dependency at its own list position', () => {
    const errors = errorsOf(`tasks:\n${task('a')}${task('b', ['a', 'x', 'y'])}`);
    expect(codesAndPaths(errors)).toEqual([
      ['unknown_dependency', 'tasks[1].depends_on[1]'],
      ['unknown_dependency', 'tasks[1].depends_on[2]'],
    ]);
  });
});

describe('dependency cycles', () => {
  it('lists the tasks of a cycle in order, starting from the first in the file', () => {
    const errors = errorsOf(
      `tasks:\n${task('a', ['c'])}${task('b', ['a'])}${task('c', ['b'])}${task('d', ['c'])}`,
    );
    expect(codesAndPaths(errors)).toEqual([['dependency_cycle', 'tasks[0].depends_on[0]']]);
    expect(errors[0]?.message).toContain('a → c → b → a');
  });

  it('reports a task that depends on itself', () => {
    const errors = errorsOf(`tasks:\n${task('a')}${task('b', ['a', 'b'])}`);
    expect(codesAndPaths(errors)).toEqual([['dependency_cycle', 'tasks[1].depends_on[1]']]);
    expect(errors[0]?.message).toContain('b → b');
  });

  it('reports two separate cycles separately', () => {
    const errors = errorsOf(
      `tasks:\n${task('a', ['b'])}${task('b', ['a'])}${task('c', ['d'])}${task('d', ['c'])}`,
    );
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringContaining('a → b → a'),
      expect.stringContaining('c → d → c'),
    ]);
  });

  it('handles a long chain, with and without a cycle at its end (no recursion limit)', () => {
    const chain = Array.from({ length: 50_000 }, (_, i) => ({
      id: `t${i}`,
      depends_on: i === 0 ? [] : [`t${i - 1}`],
    }));
    expect(checkTaskGraph(chain)).toEqual([]);
    chain[0] = { id: 't0', depends_on: ['t49999'] };
    const errors = checkTaskGraph(chain);
    expect(codesAndPaths(errors)).toEqual([['dependency_cycle', 'tasks[0].depends_on[0]']]);
    expect(errors[0]?.message).toContain('t0 → t49999 → t49998');
    expect(errors[0]?.message).toContain('… 49990 more → t0');
  });
});

describe('template references', () => {
  it('accepts outputs of direct and transitive upstream tasks', () => {
    parseOk(
      `tasks:\n${task('a')}${task('b', ['a'])}${task('c', ['b'], 'echo {{ outputs.a.rows }} {{outputs.b.n}}')}`,
    );
  });

  it('rejects outputs of a task that is not upstream, of itself, and of a task that does not exist', () => {
    const errors = errorsOf(`tasks:
${task('a')}${task('b')}
  - id: c
    type: http
    depends_on: [a]
    request:
      url: "https://example.test/{{ outputs.a.path }}"
      headers: { X-Rows: "{{ outputs.b.rows }}" }
      body: { items: ["{{ outputs.c.x }}", "{{ outputs.zz.y }}"] }
`);
    expect(codesAndPaths(errors)).toEqual([
      ['invalid_reference', 'tasks[2].request.headers.X-Rows'],
      ['invalid_reference', 'tasks[2].request.body.items[0]'],
      ['invalid_reference', 'tasks[2].request.body.items[1]'],
    ]);
    expect(errors.map((e) => e.message)).toEqual([
      'task "b" is not upstream of "c": add it to depends_on (directly or through another task)',
      'task "c" cannot use its own outputs',
      'no task "zz" in this flow',
    ]);
  });

  it('rejects template roots other than outputs, and malformed output references', () => {
    const errors = errorsOf(
      `tasks:\n${task('a')}${task('b', ['a'], 'echo {{ inputs.day }} {{ outputs.a }}')}`,
    );
    expect(codesAndPaths(errors)).toEqual([
      ['invalid_reference', 'tasks[1].script'],
      ['invalid_reference', 'tasks[1].script'],
    ]);
    expect(errors[0]?.message).toContain('write \\{{ for a literal');
  });

  it('lets a script write a literal {{ as \\{{', () => {
    parseOk(`tasks:\n${task('a', [], "docker ps --format '\\{{.ID}}'")}`);
  });

  it('does not render templates in executor blocks', () => {
    const errors = errorsOf(`tasks:
${task('a')}
  - id: b
    type: command
    command: [ls]
    depends_on: [a]
    executor: { type: docker, image: "app:{{ outputs.a.tag }}" }
`);
    expect(codesAndPaths(errors)).toEqual([['invalid_reference', 'tasks[1].executor.image']]);
  });
});

describe('DAG helpers', () => {
  const flow = parseOk(
    `tasks:\n${task('extract')}${task('seed')}${task('load', ['extract', 'seed'])}${task('report', ['load'])}${task('audit', ['extract'])}`,
  );
  const byId = (id: string) => flow.tasks.find((t) => t.id === id)!;

  it('finds the roots and the direct dependents', () => {
    expect(roots(flow).map((t) => t.id)).toEqual(['extract', 'seed']);
    expect(dependentsOf(flow, 'extract').map((t) => t.id)).toEqual(['load', 'audit']);
    expect(dependentsOf(flow, 'report')).toEqual([]);
  });

  it('is ready only when every dependency has succeeded', () => {
    expect(isReady(byId('load'), new Set(['extract']))).toBe(false);
    expect(isReady(byId('load'), ['extract', 'seed'])).toBe(true);
    expect(isReady(byId('extract'), [])).toBe(true);
  });

  it('orders tasks after their dependencies and finds everything downstream', () => {
    expect(topologicalOrder(flow)).toEqual(['extract', 'seed', 'load', 'audit', 'report']);
    expect(downstreamOf(flow, 'extract').map((t) => t.id)).toEqual(['load', 'report', 'audit']);
  });
});
