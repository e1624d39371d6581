import { mapIssueToLine } from '../src/apply/lines';

// `sluice apply` prints a validation issue at `file:line` (docs/cli.md#apply):
// the line of the deepest key or item of its path that the YAML has.

const FLOW = [
  '# comment',
  'retry: { max_attempts: 2 }',
  'tasks:',
  '  - id: a',
  '    type: command',
  '    command: ["true"]',
  '  - id: b',
  '    type: script',
  '    executor:',
  '      image: ""',
  '',
].join('\n');

const at = (path: string, message = 'm') => mapIssueToLine(FLOW, { code: 'c', path, message });

describe('mapIssueToLine', () => {
  it('points at the key of the path', () => {
    expect(at('tasks[0].type')).toBe(5);
    expect(at('tasks[1].executor.image')).toBe(10);
    expect(at('retry.max_attempts')).toBe(2);
  });

  it('a missing key or item points at the deepest part that exists', () => {
    expect(at('tasks[1].script')).toBe(7);
    expect(at('tasks[5].id')).toBe(3);
    expect(at('schedule')).toBe(2);
  });

  it('a YAML syntax error names its own line', () => {
    expect(at('', 'Unexpected end of flow sequence (line 4, column 1)')).toBe(4);
  });
});
