import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ConnectorOutputParser,
  OperationOutcomeCollector,
  type ConnectorOperation,
  type OperationOutcome,
  type ParsedLine,
} from '@sluice/connector-protocol';
import type { ConnectorTaskPart, LogStream } from '@sluice/protocol';
import { failureText } from './failure-text';
import { cutMarker } from './line-splitter';

/** The config file sits in the run dir beside work/, where no snapshot file can shadow it. */
const CONFIG_BASENAME = 'connector-config.json';

export interface ConnectorCommand {
  argv: [string, ...string[]];
  /** Written with mode 0600 before the connector starts; none for `spec`. */
  configFile: { path: string; body: string } | null;
}

/**
 * `<command...> <operation> [--config <file>]`: the connector protocol's
 * command line (docs/connectors.md). The command is the task's (process
 * executor); for an image, the runner runs inside that image's container and
 * takes the image's command (imageEntrypoint). Null when there is neither.
 */
export function connectorCommand(
  task: ConnectorTaskPart,
  runRoot: string,
  runnerEnv: Record<string, string | undefined>,
): ConnectorCommand | null {
  const entrypoint = imageEntrypoint(runnerEnv);
  const command = task.command ?? (task.image && entrypoint?.length ? entrypoint : undefined);
  if (!command) return null;
  const [file, ...args] = command;
  if (task.operation === 'spec') return { argv: [file!, ...args, 'spec'], configFile: null };
  const path = join(runRoot, CONFIG_BASENAME);
  return {
    argv: [file!, ...args, task.operation, '--config', path],
    configFile: { path, body: JSON.stringify(task.config) },
  };
}

/**
 * The image's command: its AIRBYTE_ENTRYPOINT, else what the docker executor
 * read from the image's config (SLUICE_CONNECTOR_ENTRYPOINT, a JSON array of
 * its ENTRYPOINT or CMD).
 */
function imageEntrypoint(env: Record<string, string | undefined>): string[] | undefined {
  const airbyte = env.AIRBYTE_ENTRYPOINT?.trim().split(/\s+/).filter(Boolean);
  if (airbyte?.length) return airbyte;
  const fromConfig = env.SLUICE_CONNECTOR_ENTRYPOINT;
  if (!fromConfig) return undefined;
  try {
    const parsed: unknown = JSON.parse(fromConfig);
    if (Array.isArray(parsed) && parsed.every((a) => typeof a === 'string')) return parsed as string[];
  } catch {
    // Not ours to fix: treated as no command, which refuses the task with a clear error.
  }
  return undefined;
}

/**
 * Writes the config file and sets up the reading of the connector's output;
 * null when there is nothing to run (see connectorCommand).
 */
export async function prepareConnector(
  task: ConnectorTaskPart,
  runRoot: string,
  runnerEnv: Record<string, string | undefined>,
  options: Omit<ConnectorOutputOptions, 'operation'>,
): Promise<{ argv: [string, ...string[]]; output: ConnectorOutput } | null> {
  const command = connectorCommand(task, runRoot, runnerEnv);
  if (!command) return null;
  // The config may hold resolved secrets: readable by the task's user only.
  if (command.configFile) await writeFile(command.configFile.path, command.configFile.body, { mode: 0o600 });
  return { argv: command.argv, output: new ConnectorOutput({ ...options, operation: task.operation }) };
}

/** What a connector task leaves: the outputs of its result, or why it failed. */
export type ConnectorResult =
  | {
      ok: true;
      outputs: Record<string, string>;
      /** The result when it is too large for an output: uploaded as this artifact instead. */
      artifact: { name: string; body: string } | null;
    }
  | { ok: false; error: string };

export interface ConnectorOutputOptions {
  operation: ConnectorOperation;
  /** Writes a task log line (the shipper masks it again). */
  log: (stream: LogStream, line: string) => void;
  /** Replaces secret values; applied before a line is cut, so no secret is left half-visible. */
  mask: (text: string) => string;
  logLineMaxBytes: number;
  outputValueMaxBytes: number;
}

/**
 * Reads one spec/check/discover run: the connector's stdout goes through the
 * protocol parser; LOG messages, TRACE errors, non-protocol lines and
 * protocol errors become task log lines, the result message becomes the
 * task's outputs. Stderr stays plain log lines and counts as log for the error.
 */
export class ConnectorOutput {
  private readonly parser = new ConnectorOutputParser();
  private readonly collector: OperationOutcomeCollector<ConnectorOperation>;
  /** The first line that broke the protocol in a way that makes the result untrustworthy. */
  private protocolError: string | null = null;

  constructor(private readonly options: ConnectorOutputOptions) {
    this.collector = new OperationOutcomeCollector(options.operation);
  }

  stdout(chunk: Buffer): void {
    for (const line of this.parser.push(chunk)) this.line(line);
  }

  stdoutEnd(): void {
    for (const line of this.parser.end()) this.line(line);
  }

  stderrLine(text: string): void {
    this.collector.addStderr(text);
  }

  finish(exit: { code: number | null; signal: string | null }): ConnectorResult {
    const outcome = this.collector.finish(exit);
    if (!outcome.ok) return { ok: false, error: failureText(outcome.error, outcome.logs, this.options.mask) };
    if (this.protocolError) {
      return { ok: false, error: failureText(this.protocolError, outcome.logs, this.options.mask) };
    }
    const { outputs, result } = resultOutputs(outcome);
    const max = this.options.outputValueMaxBytes;
    if (outputs.message !== undefined && Buffer.byteLength(outputs.message) > max) {
      outputs.message = outputs.message.slice(0, Math.floor(max / 4));
    }
    if (Buffer.byteLength(result) <= max)
      return { ok: true, outputs: { result, ...outputs }, artifact: null };
    // Masked here: artifacts are uploaded as they are, unlike outputs.
    const name = `${outcome.operation}-result.json`;
    this.options.log(
      'system',
      `the result is ${Buffer.byteLength(result)} bytes, over the output limit of ${max}: it is the artifact ${name}`,
    );
    return {
      ok: true,
      outputs: { result_artifact: name, ...outputs },
      artifact: { name, body: this.options.mask(result) },
    };
  }

  private line(line: ParsedLine): void {
    this.collector.add(line);
    const { log } = this.options;
    switch (line.kind) {
      case 'non-protocol':
        return log('stdout', this.cut(line.text));
      case 'error':
        // Strict, like the outcome: a broken message (an over-long line may be a cut one) fails the
        // operation even when a result came too; only a malformed LOG is just a log line lost.
        if (line.error.code === 'line_too_long' || line.error.messageType !== 'LOG') {
          this.protocolError ??= `the connector broke the protocol: ${line.error.message}`;
        }
        return log('system', `connector protocol error: ${line.error.message}`);
      case 'unknown':
        return log('system', `line ${line.line}: message of unknown type ${line.type} ignored`);
      case 'message': {
        const m = line.message;
        if (m.type === 'LOG') log('stdout', this.cut(`${m.log.level} ${m.log.message}`));
        else if (m.type === 'TRACE' && m.trace.type === 'ERROR' && m.trace.error) {
          const kind = m.trace.error.failure_type ?? 'error';
          log('stdout', this.cut(`TRACE ERROR (${kind}): ${m.trace.error.message}`));
        } else if (m.type === 'SPEC' || m.type === 'CONNECTION_STATUS' || m.type === 'CATALOG') {
          log('system', `connector answered ${m.type} (${line.bytes} bytes)`);
        }
        return;
      }
    }
  }

  private cut(text: string): string {
    const masked = this.options.mask(text);
    const max = this.options.logLineMaxBytes;
    if (Buffer.byteLength(masked) <= max) return masked;
    const bytes = Buffer.from(masked);
    let end = max;
    // Step back over UTF-8 continuation bytes so a character is not split.
    while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
    return bytes.subarray(0, end).toString('utf8') + cutMarker(max);
  }
}

/** The task's outputs for a result: `result` (the JSON) plus flat keys per operation (docs/connectors.md). */
function resultOutputs(outcome: Extract<OperationOutcome, { ok: true }>): {
  outputs: Record<string, string>;
  result: string;
} {
  const result = JSON.stringify(outcome.result);
  const outputs: Record<string, string> = {};
  switch (outcome.operation) {
    case 'check': {
      const status = outcome.result as { status: string; message?: string };
      outputs.status = status.status;
      if (status.message !== undefined) outputs.message = status.message;
      break;
    }
    case 'discover': {
      const catalog = outcome.result as { streams: { name: string }[] };
      outputs.streams = String(catalog.streams.length);
      break;
    }
    case 'spec':
      break;
  }
  return { outputs, result };
}
