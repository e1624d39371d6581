import { COMMON_HELP } from './args';
import { ApiClient } from './client';
import type { Io } from './io';
import { resolveConnection } from './settings';

/** One `sluice <name>` of the user CLI. */
export interface Command {
  name: string;
  summary: string;
  /** The usage line(s) and the command's own options; the common ones are added. */
  usage: string;
  run(args: string[], io: Io): Promise<number>;
}

/** The --help of a command: its usage, the common options, and the variables it reads. */
export async function helpText(command: Pick<Command, 'usage'>): Promise<string> {
  const { formatVarsHelp } = await import('@sluice/config');
  return `${command.usage.trimEnd()}\n\n${COMMON_HELP}\n\nEnvironment:\n${formatVarsHelp('cli')}\n`;
}

/** A client for the server and token of the flags, the environment or the config file. */
export function connect(
  values: { server?: string | boolean | undefined; token?: string | boolean | undefined },
  io: Io,
): ApiClient {
  const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  return new ApiClient(resolveConnection({ server: str(values.server), token: str(values.token) }, io.env));
}

/** `--help`: the text on stdout, exit 0. */
export async function printHelp(io: Io, command: Pick<Command, 'usage'>): Promise<number> {
  io.out(await helpText(command));
  return 0;
}
