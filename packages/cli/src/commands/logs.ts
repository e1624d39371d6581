import { outputFormat, parse, positionals } from '../args';
import { connect, printHelp, type Command } from '../command';
import type { Io } from '../io';
import { eachLogLine, printLine } from '../logs/stream';

export const logs: Command = {
  name: 'logs',
  summary: 'Print a task run’s log lines',
  usage: `usage: sluice logs <task-run-id> [-f]

Prints the lines a task run wrote, stdout and stderr in the order written, on
stdout; Sluice's own lines about the task run (stream system) go to stderr.
Task run ids are in sluice executions get <id>.

Options:
  -f, --follow      keep printing new lines until the task run has ended
With --output json, one JSON object per line (seq, stream, line, ts).`,

  async run(args: string[], io: Io): Promise<number> {
    const { values, positionals: rest } = parse(args, { follow: { type: 'boolean', short: 'f' } });
    if (values.help) return printHelp(io, this);
    const [id] = positionals(rest, ['task-run-id']);
    const format = outputFormat(values.output);
    await eachLogLine(connect(values, io), id!, values.follow === true, (line) =>
      format === 'json' ? io.out(`${JSON.stringify(line)}\n`) : printLine(io, line),
    );
    return 0;
  },
};
