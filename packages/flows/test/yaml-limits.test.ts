import { parseFlow, parseNamespaceConfig } from '@sluice/flows';

const CTX = { namespace: 'etl', flowId: 'daily' };

/** The classic "billion laughs": nine levels of nine aliases each, 9^9 strings once expanded. */
function billionLaughs(): string {
  const names = 'abcdefghij'.split('');
  let text = `${names[0]}: &${names[0]} ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n`;
  for (let i = 1; i < names.length; i++) {
    text += `${names[i]}: &${names[i]} [${Array(9)
      .fill(`*${names[i - 1]}`)
      .join(',')}]\n`;
  }
  return `${text}tasks: []\n`;
}

function errorsOf(text: string) {
  const result = parseFlow(text, CTX);
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.errors;
}

test('a billion-laughs document is refused as yaml_too_complex, quickly', () => {
  const started = Date.now();
  expect(errorsOf(billionLaughs())).toEqual([
    { code: 'yaml_too_complex', path: '', message: 'its aliases expand past the limit of 100' },
  ]);
  expect(Date.now() - started).toBeLessThan(2_000);
});

test.each([
  ['flow sequences', '['.repeat(10_000) + ']'.repeat(10_000)],
  ['flow mappings', 'a: ' + '{a: '.repeat(10_000) + '1' + '}'.repeat(10_000)],
  ['block sequences', 'a:\n' + '- '.repeat(10_000) + 'x\n'],
  ['block mappings', Array.from({ length: 10_000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n')],
])('%s nested 10 000 deep are refused as yaml_too_complex without exhausting the stack', (_, text) => {
  const started = Date.now();
  expect(errorsOf(text)).toEqual([
    { code: 'yaml_too_complex', path: '', message: 'nested more than 100 levels deep' },
  ]);
  expect(Date.now() - started).toBeLessThan(2_000);
});

test('namespace.yaml has the same limits, reported against the file', () => {
  const result = parseNamespaceConfig('defaults: ' + '['.repeat(5_000) + ']'.repeat(5_000));
  expect(result.ok || result.errors).toEqual([
    { code: 'yaml_too_complex', path: 'namespace.yaml', message: 'nested more than 100 levels deep' },
  ]);
});

test('ordinary anchors and nesting within the limits still parse', () => {
  const nested = 'env: ' + '{a: '.repeat(50) + '1' + '}'.repeat(50);
  const text = `
x-defaults: &defaults { type: command, command: [echo, hi] }
tasks:
  - { <<: *defaults, id: a }
  - { <<: *defaults, id: b }
`;
  // x-defaults is an unknown field, but the aliases themselves are accepted.
  expect(errorsOf(text).map((e) => e.code)).toEqual(['unknown_field']);
  expect(errorsOf(nested).every((e) => e.code !== 'yaml_too_complex')).toBe(true);
});
