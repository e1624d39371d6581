import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The options every command takes (docs/cli.md#configuration). */
export const COMMON_OPTIONS = {
  server: { type: 'string' },
  token: { type: 'string' },
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

export const COMMON_HELP = `Options of every command:
  --server URL      the server's public API (else SLUICE_URL, else sluice login's config)
  --token T         the user token (else SLUICE_TOKEN, else sluice login's config)
  -o, --output F    table (the default; plain text) or json
  -h, --help        this text`;

export type OutputFormat = 'table' | 'json';

type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{
    args: string[];
    options: typeof COMMON_OPTIONS & O;
    strict: true;
    allowPositionals: true;
  }>
>;

/** node:util's parser, strict, with its error as one UsageError sentence. */
export function parse<O extends Options>(args: string[], options: O): Parsed<O> {
  try {
    return parseArgs({
      args,
      options: { ...COMMON_OPTIONS, ...options },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    // node:util's messages are one sentence plus advice; keep the sentence.
    throw new UsageError((error as Error).message.split('. ')[0]!.replace(/\.$/, ''));
  }
}

export function outputFormat(value: string | boolean | undefined): OutputFormat {
  if (value === undefined || value === 'table' || value === 'text') return 'table';
  if (value === 'json') return 'json';
  throw new UsageError(`--output must be table or json, got "${String(value)}"`);
}

/** Exactly `count` positionals, named for the message. */
export function positionals(values: string[], names: string[]): string[] {
  if (values.length < names.length) throw new UsageError(`missing <${names[values.length]}>`);
  if (values.length > names.length) throw new UsageError(`unexpected argument "${values[names.length]}"`);
  return values;
}
