import { ExecutionCancelRequested } from '@sluice/api-schemas';
import { outputFormat, parse, positionals } from '../args';
import { connect, printHelp, type Command } from '../command';
import type { Io } from '../io';
import { printJson } from '../output';

export const cancel: Command = {
  name: 'cancel',
  summary: 'Cancel an execution',
  usage: `usage: sluice cancel <execution-id>

Requests the cancellation of an execution: its queued task runs end CANCELLED,
running ones are stopped. Returns once the request is recorded; see
sluice executions get <id> for its end.`,

  async run(args: string[], io: Io): Promise<number> {
    const { values, positionals: rest } = parse(args, {});
    if (values.help) return printHelp(io, this);
    const [id] = positionals(rest, ['execution-id']);
    const format = outputFormat(values.output);
    const answer = await connect(values, io).json(
      'POST',
      `/executions/${encodeURIComponent(id!)}/cancel`,
      ExecutionCancelRequested,
    );
    if (format === 'json') printJson(io, answer);
    else io.out(`execution ${answer.id}: cancel requested (state ${answer.state})\n`);
    return 0;
  },
};
