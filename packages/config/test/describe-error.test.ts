import { describeError } from '@sluice/config';

describe('describeError', () => {
  it("says what an Error says, with its cause's message when that adds something", () => {
    expect(describeError(new Error('boom'))).toBe('boom');
    expect(describeError(new Error('outer', { cause: new Error('inner') }))).toBe('outer (cause: inner)');
    expect(describeError(new Error('outer: inner', { cause: new Error('inner') }))).toBe('outer: inner');
  });

  it('names an Error without a message by its name and code', () => {
    expect(describeError(Object.assign(new Error(''), { code: 'ECONNREFUSED' }))).toBe('Error ECONNREFUSED');
    expect(describeError(new TypeError(''))).toBe('TypeError (without a message)');
  });

  it('lists the errors of an AggregateError (how Node reports a refused connection)', () => {
    const err = new AggregateError(
      [new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')],
      '',
    );
    expect(describeError(err)).toBe('connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432');
  });

  it('never answers undefined or [object Object] for a value that is not an Error', () => {
    expect(describeError('plain words')).toBe('plain words');
    expect(describeError({ message: 'from an object' })).toBe('from an object');
    expect(describeError(undefined)).toBe('undefined was thrown, without any message');
    expect(describeError(null)).toBe('null was thrown, without any message');
    expect(describeError(1)).toBe('a number was thrown: 1');
    expect(describeError({ code: 3, lines: ['a'] })).toBe(
      "an object was thrown: { code: 3, lines: [ 'a' ] }",
    );
    expect(describeError('')).toBe('an empty string was thrown');
  });
});
