import { LineSplitter } from '../src/line-splitter';

function split(maxBytes: number, chunks: (string | Buffer)[]): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter(maxBytes, (line) => lines.push(line));
  for (const chunk of chunks) splitter.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  splitter.end();
  return lines;
}

test('lines split across chunks are joined, CRLF endings dropped, empty lines kept', () => {
  expect(split(100, ['one\r\ntw', 'o\n\nthr', 'ee'])).toEqual(['one', 'two', '', 'three']);
});

test('a line over the limit is emitted once, cut and marked, and the next line is intact', () => {
  expect(split(10, ['0123456789abcdef', 'ghij\nnext\n'])).toEqual([
    '0123456789 [line cut: longer than 10 bytes]',
    'next',
  ]);
});

test('a cut never splits a multi-byte character', () => {
  // "é" is 2 bytes: 9 ASCII bytes + "é" would straddle the 10-byte limit.
  const [line] = split(10, ['123456789é tail\n']);
  expect(line).toBe('123456789 [line cut: longer than 10 bytes]');
});

test('a multi-byte character split across chunks is decoded whole', () => {
  const bytes = Buffer.from('naïve\n');
  expect(split(100, [bytes.subarray(0, 3), bytes.subarray(3)])).toEqual(['naïve']);
});
