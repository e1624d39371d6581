import { Execution, ExecutionList } from '@sluice/api-schemas';
import { ExecutionState } from '@sluice/protocol';
import { outputFormat, parse, positionals } from '../args';
import { connect, printHelp, type Command } from '../command';
import { UsageError } from '../errors';
import type { Io } from '../io';
import { duration, printJson, table, time } from '../output';

const USAGE = `usage: sluice executions list [--namespace NS] [--flow F] [--state S] [--since T] [--until T] [--limit N] [--cursor C]
       sluice executions get <execution-id>

list: the executions of the token's workspace, newest first.
  --namespace NS    only this namespace's
  --flow F          only this flow's (needs --namespace)
  --state S         QUEUED, RUNNING, SUCCEEDED, FAILED or CANCELLED
  --since T         created at or after T: a duration back from now (30m, 2h, 7d) or an ISO time
  --until T         created before T (the same forms)
  --limit N         at most N (default 20); the next page's --cursor is printed after the table
get: one execution and its task runs (their ids are what sluice logs takes).`;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30m` → the ISO time 30 minutes ago; an ISO time as it is. */
export function sinceTime(value: string, flag: string, now = Date.now()): string {
  const relative = /^(\d+)([smhd])$/.exec(value);
  if (relative) return new Date(now - Number(relative[1]) * UNITS[relative[2]!]!).toISOString();
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed))
    throw new UsageError(`${flag} "${value}" is neither a duration (30m, 2h, 7d) nor a time`);
  return new Date(parsed).toISOString();
}

const OPTIONS = {
  namespace: { type: 'string' },
  flow: { type: 'string' },
  state: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
} as const;

export const executions: Command = {
  name: 'executions',
  summary: 'List or get executions',
  usage: USAGE,

  async run(args: string[], io: Io): Promise<number> {
    const { values, positionals: rest } = parse(args, OPTIONS);
    if (values.help) return printHelp(io, this);
    const [sub, ...more] = rest;
    if (sub === undefined) throw new UsageError('expected a subcommand: list or get');
    const format = outputFormat(values.output);
    if (sub === 'get') {
      for (const key of Object.keys(OPTIONS))
        if (values[key as keyof typeof OPTIONS] !== undefined) throw new UsageError(`get takes no --${key}`);
      const [id] = positionals(more, ['execution-id']);
      const execution = await connect(values, io).json(
        'GET',
        `/executions/${encodeURIComponent(id!)}`,
        Execution,
      );
      if (format === 'json') printJson(io, execution);
      else io.out(describeExecution(execution));
      return 0;
    }
    if (sub !== 'list') throw new UsageError(`unknown subcommand "${sub}"; expected list or get`);
    positionals(more, []);
    const state = values.state?.toUpperCase();
    if (state !== undefined && !ExecutionState.safeParse(state).success)
      throw new UsageError(`--state must be one of ${ExecutionState.options.join(', ')}`);
    if (values.flow !== undefined && values.namespace === undefined)
      throw new UsageError('--flow needs --namespace');
    const limit = values.limit ?? '20';
    if (!/^\d+$/.test(limit) || Number(limit) < 1) throw new UsageError('--limit must be a whole number ≥ 1');
    const page = await connect(values, io).json('GET', '/executions', ExecutionList, {
      query: {
        namespace: values.namespace,
        flow: values.flow,
        state,
        createdAfter: values.since === undefined ? undefined : sinceTime(values.since, '--since'),
        createdBefore: values.until === undefined ? undefined : sinceTime(values.until, '--until'),
        limit,
        cursor: values.cursor,
      },
    });
    if (format === 'json') {
      printJson(io, page);
      return 0;
    }
    if (page.executions.length === 0) io.out('no executions\n');
    else
      io.out(
        table(
          ['ID', 'FLOW', 'STATE', 'TRIGGER', 'CREATED', 'DURATION'],
          page.executions.map((e) => [
            e.id,
            `${e.namespace}/${e.flowId}`,
            e.cancelRequested && !['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(e.state)
              ? `${e.state} (cancelling)`
              : e.state,
            e.trigger,
            time(e.createdAt),
            duration(e.startedAt, e.endedAt),
          ]),
        ),
      );
    if (page.nextCursor) io.err(`more: --cursor ${page.nextCursor}\n`);
    return 0;
  },
};

type ExecutionView = ReturnType<typeof Execution.parse>;

export function describeExecution(e: ExecutionView): string {
  const lines = [
    `id:         ${e.id}`,
    `flow:       ${e.namespace}/${e.flowId}`,
    `state:      ${e.state}${e.reason ? ` (${e.reason})` : ''}${e.cancelRequested ? ', cancel requested' : ''}`,
    `trigger:    ${e.trigger}`,
    `created:    ${time(e.createdAt)}`,
    `started:    ${time(e.startedAt)}`,
    `ended:      ${time(e.endedAt)}`,
    `duration:   ${duration(e.startedAt, e.endedAt)}`,
    '',
  ];
  if (e.taskRuns.length === 0) return `${lines.join('\n')}no task runs yet\n`;
  return (
    lines.join('\n') +
    table(
      ['TASK', 'ATTEMPT', 'STATE', 'EXECUTOR', 'DURATION', 'TASK RUN ID'],
      e.taskRuns.map((r) => [
        r.taskId,
        String(r.attempt),
        `${r.state}${r.reason ? ` (${r.reason})` : ''}${r.exitCode !== null && r.state === 'FAILED' ? ` exit ${r.exitCode}` : ''}`,
        `${r.executor.type}/${r.executor.pool}`,
        duration(r.startedAt, r.endedAt),
        r.id,
      ]),
    )
  );
}
