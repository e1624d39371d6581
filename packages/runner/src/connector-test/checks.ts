import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  OperationOutcomeCollector,
  StateTracker,
  StateTrackingError,
  streamKey,
  type AirbyteCatalog,
  type ConnectorOperation,
  type OperationResults,
  type StateMessage,
} from '@sluice/connector-protocol';
import { runConnector, type ConnectorRun } from './run-connector';

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

export interface ConformanceOptions {
  command: readonly [string, ...string[]];
  /** The connector's config (JSON text); `{}` when none is given. */
  config: string;
  /** Records a source may send before the read is stopped. */
  maxRecords: number;
  timeoutMs: number;
}

/**
 * `sluice connector test`: spec, check, then by kind — a source (its spec
 * has no supported_destination_sync_modes): discover and a short read of
 * every stream, whose states must be valid, not repeated twice in a row, and
 * present for every stream; a destination: a write of two streams' records
 * and states, which must be echoed, in order. Each check reports what it saw.
 */
export async function runConformance(options: ConformanceOptions): Promise<CheckResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-connector-test-'));
  try {
    const configPath = join(dir, 'config.json');
    await writeFile(configPath, options.config, { mode: 0o600 });
    const results: CheckResult[] = [];
    const spec = await operation(options, 'spec', []);
    results.push(spec.check);
    if (!spec.result) return results;
    const check = await operation(options, 'check', ['--config', configPath]);
    results.push(check.check);
    if (!check.result || check.result.status !== 'SUCCEEDED') return results;
    const isDestination = spec.result.supported_destination_sync_modes !== undefined;
    if (isDestination) {
      results.push(await writeCheck(options, dir, configPath));
      return results;
    }
    const discover = await operation(options, 'discover', ['--config', configPath]);
    results.push(discover.check);
    if (!discover.result) return results;
    results.push(...(await readChecks(options, dir, configPath, discover.result)));
    return results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function operation<O extends ConnectorOperation>(
  options: ConformanceOptions,
  op: O,
  args: string[],
): Promise<{ check: CheckResult; result?: OperationResults[O] }> {
  const run = await start(options, [op, ...args]);
  if ('error' in run) return { check: { name: op, ok: false, detail: run.error } };
  const collector = new OperationOutcomeCollector(op);
  run.lines.forEach((l) => collector.add(l));
  run.stderr.forEach((l) => collector.addStderr(l));
  const outcome = collector.finish(run.exit);
  if (!outcome.ok) return { check: { name: op, ok: false, detail: withLogs(outcome.error, outcome.logs) } };
  const result = outcome.result;
  const detail =
    op === 'spec'
      ? 'a SPEC message'
      : op === 'check'
        ? `CONNECTION_STATUS ${(result as OperationResults['check']).status}${(result as OperationResults['check']).message ? `: ${(result as OperationResults['check']).message}` : ''}`
        : `a CATALOG of ${(result as AirbyteCatalog).streams.length} streams (${(result as AirbyteCatalog).streams.map((s) => s.name).join(', ')})`;
  const ok = op !== 'check' || (result as OperationResults['check']).status === 'SUCCEEDED';
  return { check: { name: op, ok, detail }, result };
}

/** The discovered catalog, every stream selected: incremental where the source supports it. */
function configuredCatalog(catalog: AirbyteCatalog) {
  return {
    streams: catalog.streams.map((stream) => ({
      stream,
      sync_mode: stream.supported_sync_modes.includes('incremental') ? 'incremental' : 'full_refresh',
      destination_sync_mode: 'append',
      ...(stream.default_cursor_field ? { cursor_field: stream.default_cursor_field } : {}),
      ...(stream.source_defined_primary_key ? { primary_key: stream.source_defined_primary_key } : {}),
    })),
  };
}

async function readChecks(
  options: ConformanceOptions,
  dir: string,
  configPath: string,
  catalog: AirbyteCatalog,
): Promise<CheckResult[]> {
  const catalogPath = join(dir, 'catalog.json');
  await writeFile(catalogPath, JSON.stringify(configuredCatalog(catalog)));
  const run = await start(options, ['read', '--config', configPath, '--catalog', catalogPath], {
    maxRecords: options.maxRecords,
  });
  if ('error' in run) return [{ name: 'read', ok: false, detail: run.error }];
  const problems: string[] = [];
  const streams = new Set(catalog.streams.map((s) => streamKey(s.name, s.namespace)));
  const records = new Map<string, number>();
  const withState = new Set<string>();
  const tracker = new StateTracker();
  let states = 0;
  let previous: string | null = null;
  let trace: string | null = null;
  for (const line of run.lines) {
    if (line.kind === 'error') problems.push(line.error.message);
    if (line.kind !== 'message') continue;
    const m = line.message;
    if (m.type === 'RECORD') {
      const key = streamKey(m.record.stream, m.record.namespace);
      if (!streams.has(key))
        problems.push(`line ${line.line}: a record of stream ${key}, which is not in the catalog`);
      records.set(key, (records.get(key) ?? 0) + 1);
      tracker.recordEmitted(m.record.stream, m.record.namespace, line.bytes);
    } else if (m.type === 'STATE') {
      states++;
      const text = JSON.stringify(m.state);
      if (text === previous) problems.push(`line ${line.line}: the same state twice in a row: ${cut(text)}`);
      previous = text;
      for (const key of stateStreams(m)) withState.add(key);
      try {
        tracker.sourceState(m);
        // The echo a destination sends back must be accepted, in order: the orchestrator's own check.
        tracker.destinationState(m);
      } catch (error) {
        if (!(error instanceof StateTrackingError)) throw error;
        problems.push(`line ${line.line}: ${error.message}`);
      }
    } else if (m.type === 'TRACE' && m.trace.type === 'ERROR' && m.trace.error) {
      trace ??= m.trace.error.message;
    }
  }
  const total = [...records.values()].reduce((a, b) => a + b, 0);
  const read: CheckResult = { name: 'read', ok: true, detail: `${total} records, ${states} states` };
  if (run.stoppedBy === 'timeout')
    Object.assign(read, { ok: false, detail: `no end within ${options.timeoutMs} ms` });
  else if (run.stoppedBy === 'limit') read.detail += ` (stopped after ${options.maxRecords} records)`;
  else if (trace) Object.assign(read, { ok: false, detail: `TRACE error: ${trace}` });
  else if (run.exit.code !== 0) {
    const how =
      run.exit.code === null ? `was killed by ${run.exit.signal}` : `exited with code ${run.exit.code}`;
    Object.assign(read, {
      ok: false,
      detail: withLogs(`the source ${how} without a TRACE error`, run.stderr),
    });
  }
  const missing = [...streams].filter((s) => !withState.has(s));
  // A read stopped at the record limit may not have reached every stream.
  if (missing.length > 0 && run.stoppedBy === null)
    problems.push(`no state for stream(s) ${missing.join(', ')}`);
  const stateCheck: CheckResult =
    problems.length === 0
      ? {
          name: 'states',
          ok: true,
          detail: `${states} states, valid, in order, none repeated twice in a row, one for every stream`,
        }
      : { name: 'states', ok: false, detail: problems.slice(0, 10).join('\n') };
  return [read, stateCheck];
}

/** The streams a state is for: its stream (STREAM), or those of its stream_states (GLOBAL). */
function stateStreams(m: StateMessage): string[] {
  const s = m.state;
  if (s.type === 'STREAM')
    return [streamKey(s.stream.stream_descriptor.name, s.stream.stream_descriptor.namespace)];
  if (s.type === 'GLOBAL')
    return s.global.stream_states.map((x) =>
      streamKey(x.stream_descriptor.name, x.stream_descriptor.namespace),
    );
  return [];
}

/** A destination's write of two streams, three records and a state each, twice: every state echoed, in order. */
async function writeCheck(
  options: ConformanceOptions,
  dir: string,
  configPath: string,
): Promise<CheckResult> {
  const names = ['sluice_conformance_a', 'sluice_conformance_b'];
  const catalog = {
    streams: names.map((name) => ({
      stream: {
        name,
        json_schema: { type: 'object', properties: { id: { type: 'integer' } } },
        supported_sync_modes: ['full_refresh'],
        source_defined_primary_key: [['id']],
      },
      sync_mode: 'full_refresh',
      destination_sync_mode: 'append',
      primary_key: [['id']],
    })),
  };
  const catalogPath = join(dir, 'catalog.json');
  await writeFile(catalogPath, JSON.stringify(catalog));
  const tracker = new StateTracker();
  const input: string[] = [];
  let id = 0;
  for (let round = 1; round <= 2; round++) {
    for (const stream of names) {
      for (let i = 0; i < 3; i++) {
        const record = {
          type: 'RECORD' as const,
          record: { stream, emitted_at: Date.now(), data: { id: ++id } },
        };
        tracker.recordEmitted(stream, undefined, 0);
        input.push(JSON.stringify(record));
      }
      const state: StateMessage = {
        type: 'STATE',
        state: { type: 'STREAM', stream: { stream_descriptor: { name: stream }, stream_state: { round } } },
      };
      tracker.sourceState(state);
      input.push(JSON.stringify(state));
    }
  }
  const run = await start(options, ['write', '--config', configPath, '--catalog', catalogPath], { input });
  if ('error' in run) return { name: 'write', ok: false, detail: run.error };
  const problems: string[] = [];
  let echoes = 0;
  let last = 0;
  for (const line of run.lines) {
    if (line.kind === 'error') problems.push(line.error.message);
    if (line.kind !== 'message' || line.message.type !== 'STATE') continue;
    echoes++;
    try {
      const commit = tracker.destinationState(line.message);
      if (commit.sequence < last)
        problems.push(`line ${line.line}: state ${commit.sequence} echoed after ${last}`);
      last = commit.sequence;
    } catch (error) {
      if (!(error instanceof StateTrackingError)) throw error;
      problems.push(`line ${line.line}: ${error.message}`);
    }
  }
  if (run.exit.code !== 0)
    problems.push(withLogs(`the destination exited with code ${run.exit.code}`, run.stderr));
  if (tracker.pendingStates > 0) problems.push(`${tracker.pendingStates} of the 4 states were never echoed`);
  return problems.length === 0
    ? { name: 'write', ok: true, detail: `12 records and 4 states written; ${echoes} echoes, in order` }
    : { name: 'write', ok: false, detail: problems.slice(0, 10).join('\n') };
}

function start(
  options: ConformanceOptions,
  args: string[],
  extra: { maxRecords?: number; input?: string[] } = {},
): Promise<ConnectorRun | { error: string }> {
  return runConnector({ argv: [...options.command, ...args], timeoutMs: options.timeoutMs, ...extra }).catch(
    (error: NodeJS.ErrnoException) => ({
      error:
        error.code === 'ENOENT'
          ? `the connector command was not found: ${options.command[0]}`
          : `the connector could not be started: ${error.code ?? error.message}`,
    }),
  );
}

function withLogs(why: string, logs: readonly string[]): string {
  const last = logs.slice(-5);
  return last.length > 0 ? `${why}\n${last.map((l) => `  | ${l}`).join('\n')}` : why;
}

function cut(text: string): string {
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
