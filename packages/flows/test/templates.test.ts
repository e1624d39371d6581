import { renderTemplates, TemplateError, templateReferences } from '@sluice/flows';

const outputs = { fetch: { rows: '42', table: 'events' }, report: { url: 'https://example.test/r/1' } };

describe('renderTemplates', () => {
  it('replaces output references in every string of a nested value, tolerating whitespace', () => {
    const task = {
      type: 'http',
      request: {
        url: '{{outputs.report.url}}',
        headers: { 'X-Rows': '{{   outputs.fetch.rows   }}' },
        body: {
          text: 'loaded {{ outputs.fetch.rows }} rows into {{ outputs.fetch.table }}',
          count: 3,
          ok: true,
        },
      },
      list: ['{{ outputs.fetch.table }}', null],
    };
    expect(renderTemplates(task, { outputs })).toEqual({
      type: 'http',
      request: {
        url: 'https://example.test/r/1',
        headers: { 'X-Rows': '42' },
        body: { text: 'loaded 42 rows into events', count: 3, ok: true },
      },
      list: ['events', null],
    });
  });

  it('does not change its input', () => {
    const value = { script: 'echo {{ outputs.fetch.rows }}' };
    renderTemplates(value, { outputs });
    expect(value.script).toBe('echo {{ outputs.fetch.rows }}');
  });

  it('inserts output values as they are, without rendering them again', () => {
    const sneaky = { up: { v: '{{ outputs.up.v }} and \\{{' } };
    expect(renderTemplates('[{{ outputs.up.v }}]', { outputs: sneaky })).toBe(
      '[{{ outputs.up.v }} and \\{{]',
    );
  });

  it('turns an escaped \\{{ into a literal {{', () => {
    expect(renderTemplates("docker ps --format '\\{{.ID}}'", { outputs })).toBe(
      "docker ps --format '{{.ID}}'",
    );
  });

  it('fails with a TemplateError naming the task and the key when an output is missing', () => {
    const render = (outputsNow: Record<string, Record<string, string>>) => () =>
      renderTemplates({ request: { body: { n: '{{ outputs.fetch.count }}' } } }, { outputs: outputsNow });
    expect(render(outputs)).toThrow(TemplateError);
    expect(render(outputs)).toThrow(
      '{{ outputs.fetch.count }} at request.body.n: task "fetch" has no output "count"',
    );
    expect(render({})).toThrow('task "fetch" has no outputs');
    try {
      render(outputs)();
    } catch (error) {
      expect(error).toMatchObject({ task: 'fetch', key: 'count', path: 'request.body.n' });
    }
  });

  it('does not find Object.prototype members as outputs', () => {
    expect(() => renderTemplates('{{ outputs.fetch.constructor }}', { outputs })).toThrow(
      'has no output "constructor"',
    );
  });

  it('refuses anything but output references', () => {
    expect(() => renderTemplates('{{ inputs.day }}', { outputs })).toThrow(TemplateError);
  });
});

describe('templateReferences', () => {
  it('lists each output reference with its path, skipping escaped braces', () => {
    expect(
      templateReferences({
        script: 'echo {{ outputs.fetch.rows }} \\{{ outputs.skip.me }}',
        request: { body: { items: ['{{outputs.report.url}}'] } },
      }),
    ).toEqual([
      { task: 'fetch', key: 'rows', path: 'script' },
      { task: 'report', key: 'url', path: 'request.body.items[0]' },
    ]);
  });
});
