import { cronProblem, nextDueTimes, parseDuration } from '@sluice/flows';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['10s', 10_000],
    ['30m', 1_800_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['1m30s500ms', 90_500],
    ['1.5h', 5_400_000],
    ['45', 45_000],
    [45, 45_000],
    [0.25, 250],
  ])('%p is %p ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each(['', '10 s', '-5s', '5 minutes', '1h 30m', 'ms', '10x', '1.h'])('rejects %p', (input) => {
    expect(parseDuration(input)).toBeUndefined();
  });

  it('rejects negative numbers and non-numbers', () => {
    expect(parseDuration(-1)).toBeUndefined();
    expect(parseDuration(Number.NaN)).toBeUndefined();
    expect(parseDuration(null)).toBeUndefined();
    expect(parseDuration({ s: 1 })).toBeUndefined();
  });
});

describe('cron schedules', () => {
  it('accepts 5 fields, 6 fields with seconds, and aliases', () => {
    for (const schedule of ['*/5 * * * *', '0 30 2 * * 1-5', '@hourly', '0 0 L * *']) {
      expect(cronProblem(schedule)).toBeUndefined();
    }
  });

  it('explains what is wrong with a bad one', () => {
    expect(cronProblem('* * * *')).toMatch(/has 4 fields; expected 5/);
    expect(cronProblem('* * * * * * *')).toMatch(/has 7 fields/);
    expect(cronProblem('61 * * * *')).toMatch(/61/);
    expect(cronProblem('0 0 31 2 *')).toMatch(/not a valid cron expression/);
    expect(cronProblem('H * * * *')).toMatch(/hashed value/);
    expect(cronProblem('  ')).toBe('the schedule is empty');
  });

  it('lists due times strictly after `after` and up to and including `until`, in UTC', () => {
    const due = nextDueTimes(
      '*/5 * * * *',
      new Date('2024-03-01T10:00:00Z'),
      new Date('2024-03-01T10:20:00Z'),
    );
    expect(due.map((d) => d.toISOString())).toEqual([
      '2024-03-01T10:05:00.000Z',
      '2024-03-01T10:10:00.000Z',
      '2024-03-01T10:15:00.000Z',
      '2024-03-01T10:20:00.000Z',
    ]);
  });

  it('supports a seconds field', () => {
    const due = nextDueTimes(
      '*/20 * * * * *',
      new Date('2024-03-01T10:00:05Z'),
      new Date('2024-03-01T10:01:00Z'),
    );
    expect(due.map((d) => d.toISOString())).toEqual([
      '2024-03-01T10:00:20.000Z',
      '2024-03-01T10:00:40.000Z',
      '2024-03-01T10:01:00.000Z',
    ]);
  });

  it('returns nothing for an empty window and at most `limit` times (the earliest)', () => {
    const t = new Date('2024-03-01T10:00:00Z');
    expect(nextDueTimes('* * * * *', t, t)).toEqual([]);
    const capped = nextDueTimes('* * * * *', t, new Date('2024-03-02T10:00:00Z'), { limit: 3 });
    expect(capped.map((d) => d.toISOString())).toEqual([
      '2024-03-01T10:01:00.000Z',
      '2024-03-01T10:02:00.000Z',
      '2024-03-01T10:03:00.000Z',
    ]);
  });

  it('throws on an invalid schedule', () => {
    expect(() => nextDueTimes('nope', new Date(0), new Date(1))).toThrow('invalid schedule');
  });
});
