import { filePathProblem, nameProblem } from '@sluice/flows';

/** The API's rules before these checks, to show that everything they accepted still passes. */
const OLD_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const oldNameOk = (v: string): boolean => OLD_NAME.test(v) && !v.includes('..');
const oldPathOk = (path: string): boolean => {
  const parts = path.split('/');
  return path.length <= 512 && !parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\'));
};

/** Deterministic pseudo-random strings over an alphabet (a fixed seed keeps failures reproducible). */
function* samples(alphabet: string[], count: number, maxLength: number): Generator<string> {
  let seed = 12345;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let i = 0; i < count; i++) {
    const length = 1 + next(maxLength);
    yield Array.from({ length }, () => alphabet[next(alphabet.length)]).join('');
  }
}

describe('nameProblem', () => {
  test('accepts names of letters, digits, ".", "_" and "-", up to 128 characters', () => {
    for (const name of ['etl', 'a', 'Daily-Load_2', 'v1.2', '9lives', 'x'.repeat(128)]) {
      expect({ name, problem: nameProblem('flow', name) }).toEqual({ name, problem: null });
    }
  });

  test.each([
    ['flow name "" is empty', ''],
    [`flow name "${'x'.repeat(80)}…" is longer than 128 characters`, 'x'.repeat(129)],
    ["contains a '/' or '\\'", '../x'],
    ["contains a '/' or '\\'", 'a/b'],
    ["contains a '/' or '\\'", 'a\\b'],
    ["contains '..'", '..'],
    ["contains '..'", 'a..b'],
    ['flow name "a\\u0000b" contains a control character', 'a\u0000b'],
    ['contains a control character', 'tab\tname'],
    ['must start with a letter or digit', '-lead'],
    ['must start with a letter or digit', '.hidden'],
    ["have only letters, digits, '.', '_' and '-'", 'spa ce'],
    ["have only letters, digits, '.', '_' and '-'", 'naïve'],
  ])('refuses a name that %s', (message, name) => {
    const problem = nameProblem('flow', name);
    expect(problem?.code).toBe('invalid_name');
    expect(problem?.message).toContain(message);
  });

  test('accepts every name the API accepted before, and refuses every other', () => {
    const alphabet = [...'aZ09._-/\\ %é', '\u0000', '\n'];
    const disagreements = [...samples(alphabet, 20_000, 12)].filter(
      (name) => (nameProblem('secret', name) === null) !== oldNameOk(name),
    );
    expect(disagreements).toEqual([]);
  });
});

describe('filePathProblem (given the percent-decoded path)', () => {
  test('accepts relative paths, dots inside names, spaces, non-ASCII, 255-byte segments, 2000-byte paths', () => {
    for (const path of [
      'namespace.yaml',
      'flows/daily.yaml',
      'scripts/.env.example',
      'a/b/c/d.txt',
      'data/naïve file (1).csv',
      '..hidden/x..y',
      'x'.repeat(255),
      `${'d'.repeat(200)}/`.repeat(10) + 'f',
    ]) {
      expect({ path, problem: filePathProblem(path) }).toEqual({ path, problem: null });
    }
  });

  test.each([
    ["has a '..' segment", '../x'], // PUT …/files/..%2Fx
    ["has a '..' segment", 'a/../../x'], // PUT …/files/a%2F..%2F..%2Fx
    ["has a '..' segment", 'a/..'],
    ["has a '.' segment", './x'],
    ['is absolute', '/etc/passwd'],
    ['has an empty segment', 'a//b'],
    ['has an empty segment', 'a/'],
    ['is empty', ''],
    ["contains '\\'", 'a\\..\\x'],
    ['file path "a\\u0000b" contains a control character at position 2', 'a\u0000b'],
    ['contains a control character at position 5', 'line\nbreak'],
    ['contains a control character', 'del\u007f'],
    ['has a segment longer than 255 bytes', 'x'.repeat(256)],
    ['is 2122 bytes, over the limit of 2048', `${'d'.repeat(100)}/`.repeat(21) + 'f'],
  ])('refuses a path that %s', (message, path) => {
    const problem = filePathProblem(path);
    expect(problem?.code).toBe('invalid_path');
    expect(problem?.message).toContain(message);
  });

  test('a huge path is quoted shortened in the message', () => {
    const problem = filePathProblem('y'.repeat(10_000));
    expect(problem?.message.length).toBeLessThan(200);
  });

  test('accepts every path the API accepted before that has no control character or over-long segment', () => {
    const alphabet = [...'ab.-_ é/\\'];
    const refused = [...samples(alphabet, 20_000, 16)].filter(
      (path) => oldPathOk(path) && filePathProblem(path) !== null,
    );
    expect(refused).toEqual([]);
  });
});
