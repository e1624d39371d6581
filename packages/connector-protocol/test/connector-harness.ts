import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  MessageWriter,
  readConnectorOutput,
  readConnectorOutputBatches,
  StateTracker,
  stateArgument,
  type CommittedState,
  type ConfiguredAirbyteCatalog,
  type ConnectorMessage,
  type ParsedLine,
  type StateCommit,
} from '@sluice/connector-protocol';

const examples = path.resolve(__dirname, '../../../examples/connectors');
export const SOURCE = path.join(examples, 'source-sequence/main.cjs');
export const DESTINATION = path.join(examples, 'destination-postgres/main.cjs');
export const NULL_DESTINATION = path.join(examples, 'destination-null/main.cjs');

/** A directory for one test's config, catalog and state files. */
export function fileWriter(): (name: string, value: unknown) => string {
  const dir = mkdtempSync(path.join(tmpdir(), 'connector-'));
  return (name, value) => {
    const file = path.join(dir, name);
    writeFileSync(file, JSON.stringify(value));
    return file;
  };
}

export interface ConnectorRun {
  code: number | null;
  lines: ParsedLine[];
  messages: ConnectorMessage[];
  stderr: string;
}

/** Runs a connector command as a real child process and parses all of its output. */
export async function runConnector(main: string, args: string[], stdin?: string): Promise<ConnectorRun> {
  const child = spawn(process.execPath, [main, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  child.stdin.end(stdin ?? '');
  const lines: ParsedLine[] = [];
  for await (const p of readConnectorOutput(child.stdout)) lines.push(p);
  const messages = lines.flatMap((p) => (p.kind === 'message' ? [p.message] : []));
  return { code: await exited, lines, messages, stderr };
}

export interface SyncResult {
  sourceCode: number | null;
  destinationCode: number | null;
  commits: StateCommit[];
  tracker: StateTracker;
  destinationMessages: ConnectorMessage[];
}

/**
 * The orchestrator's job in miniature, built from this package's pieces: the
 * source's RECORDs and STATEs forwarded to the destination with backpressure,
 * each source state committed once the destination echoes it.
 */
export async function syncThrough(
  sourceArgs: string[],
  destinationArgs: string[],
  initial?: CommittedState,
): Promise<SyncResult> {
  const source = spawn(process.execPath, [SOURCE, ...sourceArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
  const destination = spawn(process.execPath, [DESTINATION, ...destinationArgs], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const sourceExit = new Promise<number | null>((resolve) => source.once('close', resolve));
  const destinationExit = new Promise<number | null>((resolve) => destination.once('close', resolve));
  const tracker = new StateTracker(initial);
  const commits: StateCommit[] = [];
  const destinationMessages: ConnectorMessage[] = [];
  const writer = new MessageWriter(destination.stdin);

  const echoes = (async () => {
    for await (const p of readConnectorOutput(destination.stdout)) {
      if (p.kind !== 'message') continue;
      destinationMessages.push(p.message);
      if (p.message.type === 'STATE') commits.push(tracker.destinationState(p.message));
    }
  })();
  try {
    for await (const batch of readConnectorOutputBatches(source.stdout)) {
      for (const p of batch) {
        if (p.kind !== 'message') continue;
        const m = p.message;
        if (m.type === 'RECORD') tracker.recordEmitted(m.record.stream, m.record.namespace, p.bytes);
        else if (m.type === 'STATE') tracker.sourceState(m);
        else continue;
        await writer.writeLine(p.text);
      }
    }
    await writer.end();
  } catch {
    // The destination went away (it failed): what it acknowledged is what counts.
    source.kill();
  }
  await echoes;
  return {
    sourceCode: await sourceExit,
    destinationCode: await destinationExit,
    commits,
    tracker,
    destinationMessages,
  };
}

/** The `read --state` file content for a committed state. */
export function stateFileContent(committed: CommittedState | undefined): unknown {
  return stateArgument(committed) ?? [];
}

/** A configured catalog for the example source's streams: incremental, deduplicated by id. */
export function incrementalCatalog(catalog: { streams: unknown[] }): ConfiguredAirbyteCatalog {
  return {
    streams: catalog.streams.map((stream) => ({
      stream: stream as ConfiguredAirbyteCatalog['streams'][number]['stream'],
      sync_mode: 'incremental' as const,
      destination_sync_mode: 'append_dedup' as const,
      cursor_field: ['id'],
      primary_key: [['id']],
    })),
  };
}
