import { readFile } from 'node:fs/promises';
import { runConformance, type CheckResult } from './checks';

export interface ConnectorCommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const USAGE = `Usage: sluice connector test [options] <command...>

Runs a connector's operations and checks that it speaks the connector protocol
(docs/connectors.md): spec, check, then for a source discover and a short read
of every stream (its states valid and accepted in order, none repeated twice in
a row, one for every stream), for a destination a write whose states are all
echoed, in order. <command...> is how the connector is started, without its
operation (e.g. node examples/connectors/source-sequence/main.cjs).

Options:
  --config FILE       the connector's config (JSON); default {}
  --max-records N     stop a source's read after N records (default 10000)
  --timeout SECONDS   limit of each operation (default 60)
  -h, --help          show this text

Exit code: 0 when every check passed, 1 when one failed, 2 for a usage error.
`;

interface Parsed {
  command: [string, ...string[]];
  configFile: string | null;
  maxRecords: number;
  timeoutMs: number;
}

/** `sluice connector <subcommand>`; only `test` exists. */
export async function runConnectorCommand(args: readonly string[], io: ConnectorCommandIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    (sub === undefined ? io.stderr : io.stdout)(USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'test') {
    io.stderr(`sluice connector: unknown command ${sub}; see sluice connector --help\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(USAGE);
    return 0;
  }
  const parsed = parseArgs(rest);
  if (typeof parsed === 'string') {
    io.stderr(`sluice connector test: ${parsed}; see sluice connector test --help\n`);
    return 2;
  }
  let config = '{}';
  if (parsed.configFile) {
    try {
      config = await readFile(parsed.configFile, 'utf8');
      JSON.parse(config);
    } catch (error) {
      io.stderr(`sluice connector test: --config ${parsed.configFile}: ${(error as Error).message}\n`);
      return 2;
    }
  }
  io.stdout(`sluice connector test: ${parsed.command.join(' ')}\n`);
  const results = await runConformance({
    command: parsed.command,
    config,
    maxRecords: parsed.maxRecords,
    timeoutMs: parsed.timeoutMs,
  });
  io.stdout(report(results));
  return results.every((r) => r.ok) ? 0 : 1;
}

function parseArgs(args: readonly string[]): Parsed | string {
  let configFile: string | null = null;
  let maxRecords = 10_000;
  let timeoutMs = 60_000;
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      i++;
      break;
    }
    if (!arg.startsWith('--')) break;
    const value = args[i + 1];
    if (value === undefined) return `${arg} needs a value`;
    i++;
    if (arg === '--config') configFile = value;
    else if (arg === '--max-records' || arg === '--timeout') {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) return `${arg} must be a positive integer, got ${value}`;
      if (arg === '--max-records') maxRecords = n;
      else timeoutMs = n * 1000;
    } else return `unknown option ${arg}`;
  }
  const [file, ...rest] = args.slice(i);
  if (!file) return 'the connector command is required';
  return { command: [file, ...rest], configFile, maxRecords, timeoutMs };
}

/** One line per check (✓ / ✗), details indented, then the verdict. */
export function report(results: readonly CheckResult[]): string {
  const lines = results.map((r) => {
    const [first, ...more] = r.detail.split('\n');
    return [
      `  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${first ?? ''}`,
      ...more.map((m) => `         ${m}`),
    ].join('\n');
  });
  const failed = results.filter((r) => !r.ok).length;
  const verdict =
    failed === 0 ? `PASS: ${results.length} checks` : `FAIL: ${failed} of ${results.length} checks failed`;
  return `${lines.join('\n')}\n${verdict}\n`;
}
