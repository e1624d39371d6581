import { Execution, ExecutionCreated } from '@sluice/api-schemas';
import { outputFormat, parse, positionals } from '../args';
import { connect, printHelp, type Command } from '../command';
import type { ApiClient } from '../client';
import { UsageError } from '../errors';
import type { Io } from '../io';
import { eachLogLine, printLine } from '../logs/stream';
import { printJson } from '../output';

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);
/** How often --follow looks for the next task run. */
const POLL_MS = 300;

/** `name=value`: the value as JSON when it parses as JSON (42, true, {"a":1}, "x"), else the text. */
export function parseInputs(pairs: string[]): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--input "${pair}" is not name=value`);
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // Not JSON: the text itself.
    }
    inputs[pair.slice(0, eq)] = value;
  }
  return inputs;
}

function flowRef(ref: string): { namespace: string; flow: string } {
  const match = /^([^/]+)\/([^/]+)$/.exec(ref);
  if (!match) throw new UsageError(`"${ref}" is not <namespace>/<flow>`);
  return { namespace: match[1]!, flow: match[2]! };
}

export const run: Command = {
  name: 'run',
  summary: 'Start an execution',
  usage: `usage: sluice run <namespace>/<flow> [--follow] [--input name=value ...]

Starts an execution of the flow and prints its id.

Options:
  -f, --follow          stream the log lines of its task runs, one task run after the
                        other in the order they were queued, until the execution ends;
                        exit 0 if it SUCCEEDED, 1 otherwise
  -i, --input N=V       an input of the flow (repeatable); V is read as JSON when it
                        parses as JSON (42, true, {"a":1}), else as text
With --output json and --follow: one JSON object per log line (taskId, taskRunId,
seq, stream, line, ts), then the ended execution.`,

  async run(args: string[], io: Io): Promise<number> {
    const { values, positionals: rest } = parse(args, {
      follow: { type: 'boolean', short: 'f' },
      input: { type: 'string', short: 'i', multiple: true },
    });
    if (values.help) return printHelp(io, this);
    const [ref] = positionals(rest, ['namespace/flow']);
    const { namespace, flow } = flowRef(ref!);
    const format = outputFormat(values.output);
    const inputs = parseInputs(values.input ?? []);
    const client = connect(values, io);
    const created = await client.json(
      'POST',
      `/namespaces/${encodeURIComponent(namespace)}/flows/${encodeURIComponent(flow)}/executions`,
      ExecutionCreated,
      // A body only with inputs: a server without flow inputs reads no body.
      Object.keys(inputs).length > 0 ? { json: { inputs } } : {},
    );
    if (!values.follow) {
      if (format === 'json') printJson(io, created);
      else io.out(`${created.id}\n`);
      return 0;
    }
    if (format !== 'json') io.err(`execution ${created.id} of ${namespace}/${flow} started\n`);
    const ended = await follow(client, created.id, io, format === 'json');
    if (format === 'json') io.out(`${JSON.stringify(ended)}\n`);
    else io.err(`execution ${ended.id} ${ended.state}${ended.reason ? ` (${ended.reason})` : ''}\n`);
    return ended.state === 'SUCCEEDED' ? 0 : 1;
  },
};

/** Follows each task run's logs in turn until the execution has ended and every task run was followed. */
async function follow(client: ApiClient, id: string, io: Io, json: boolean) {
  const followed = new Set<string>();
  for (;;) {
    const execution = await client.json('GET', `/executions/${encodeURIComponent(id)}`, Execution);
    const next = execution.taskRuns.find((r) => !followed.has(r.id));
    if (next) {
      followed.add(next.id);
      if (!json) io.err(`--- ${next.taskId}${next.attempt > 1 ? ` (attempt ${next.attempt})` : ''}\n`);
      await eachLogLine(client, next.id, true, (line) =>
        json
          ? io.out(`${JSON.stringify({ taskId: next.taskId, taskRunId: next.id, ...line })}\n`)
          : printLine(io, line),
      );
      continue;
    }
    if (TERMINAL.has(execution.state)) return execution;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
