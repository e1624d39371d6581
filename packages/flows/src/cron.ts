import { CronExpressionParser, type CronExpression } from 'cron-parser';

/*
 * Flow schedules: standard 5-field cron (minute hour day-of-month month
 * day-of-week), 6 fields with seconds first, or an alias such as `@hourly`.
 * Always evaluated in UTC, so a schedule means the same on every instance.
 */

const ALIAS = /^@[a-z]+$/;
// Jenkins-style hashed values (`H`, `H/15`, `H(0-29)`): cron-parser seeds them at random
// unless given a seed, so two scheduler cycles would disagree on when a flow is due.
const HASHED = /(^|[\s,])H(?=$|[\s,(/])/;

function compile(schedule: string, after: Date): CronExpression {
  return CronExpressionParser.parse(schedule.trim(), { currentDate: after, tz: 'UTC' });
}

/** Why `schedule` is not a usable cron expression, or undefined when it is. */
export function cronProblem(schedule: string): string | undefined {
  const text = schedule.trim();
  if (text === '') return 'the schedule is empty';
  if (!ALIAS.test(text)) {
    const fields = text.split(/\s+/).length;
    if (fields !== 5 && fields !== 6) {
      return `"${text}" has ${fields} field${fields === 1 ? '' : 's'}; expected 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)`;
    }
    if (HASHED.test(text)) return `"${text}" uses a hashed value (H), which is not supported`;
  }
  try {
    compile(text, new Date(0)).next();
    return undefined;
  } catch (error) {
    return `"${text}" is not a valid cron expression: ${(error as Error).message}`;
  }
}

export interface DueTimesOptions {
  /** Most times returned (the earliest ones); default 1000, so a long outage cannot flood the scheduler. */
  limit?: number;
}

/**
 * The times `schedule` is due in the window (after, until]: strictly after
 * `after`, up to and including `until`, oldest first. Throws on an invalid
 * schedule (flows are validated on save, so that means a bug upstream).
 */
export function nextDueTimes(
  schedule: string,
  after: Date,
  until: Date,
  options: DueTimesOptions = {},
): Date[] {
  const problem = cronProblem(schedule);
  if (problem !== undefined) throw new Error(`invalid schedule: ${problem}`);
  const limit = options.limit ?? 1000;
  const due: Date[] = [];
  if (until.getTime() <= after.getTime()) return due;
  const expression = compile(schedule, after);
  while (due.length < limit && expression.hasNext()) {
    const next = expression.next().toDate();
    if (next.getTime() > until.getTime()) break;
    due.push(next);
  }
  return due;
}
