import {
  ConnectorOutputParser,
  OperationOutcomeCollector,
  serializeMessage,
  type ConnectorOperation,
} from '@sluice/connector-protocol';
import { runConnector, SOURCE, fileWriter } from './connector-harness';

const now = 1_764_576_000_000;
const trace = (message: string, failure_type = 'system_error') =>
  serializeMessage({
    type: 'TRACE',
    trace: { type: 'ERROR', emitted_at: now, error: { message, failure_type } },
  });
const log = (message: string) => serializeMessage({ type: 'LOG', log: { level: 'INFO', message } });
const spec = serializeMessage({ type: 'SPEC', spec: { connectionSpecification: { type: 'object' } } });

function outcome<O extends ConnectorOperation>(
  operation: O,
  output: string,
  code: number | null,
  keep?: number,
) {
  const collector = new OperationOutcomeCollector(operation, keep);
  const parser = new ConnectorOutputParser();
  for (const line of [...parser.push(output), ...parser.end()]) collector.add(line);
  return collector.finish({ code, signal: code === null ? 'SIGKILL' : null });
}

describe('OperationOutcomeCollector', () => {
  it('takes the result message of a run that exits 0', () => {
    expect(outcome('spec', log('starting') + spec, 0)).toEqual({
      ok: true,
      operation: 'spec',
      result: { connectionSpecification: { type: 'object' } },
      logs: ['INFO starting'],
    });
  });

  it("fails with the connector's TRACE message and its last log lines", () => {
    const output =
      log('one') + 'Exception in thread main\n' + log('two') + trace('cannot reach the API') + trace('later');
    expect(outcome('discover', output, 1, 2)).toEqual({
      ok: false,
      operation: 'discover',
      error: 'cannot reach the API',
      trace: { message: 'cannot reach the API', failure_type: 'system_error' },
      logs: ['Exception in thread main', 'INFO two'],
    });
    // A TRACE error fails the operation even with exit code 0 and a result.
    expect(outcome('spec', spec + trace('half broken'), 0)).toMatchObject({
      ok: false,
      error: 'half broken',
    });
  });

  it('says what went wrong when the connector sent no TRACE', () => {
    expect(outcome('spec', 'garbage\n', 3)).toMatchObject({
      ok: false,
      error: 'the connector exited with code 3 without a TRACE error',
      logs: ['garbage'],
    });
    expect(outcome('spec', '', null)).toMatchObject({
      error: 'the connector was killed by SIGKILL without a TRACE error',
    });
    expect(outcome('discover', '{"type":"CATALOG","catalog":{}}\n', 0)).toMatchObject({
      ok: false,
      error:
        'the connector exited with code 0 without a CATALOG message (line 1: CATALOG catalog.streams: expected array, received undefined)',
    });
  });

  it('reads a config_error TRACE from check as a FAILED connection status', () => {
    expect(outcome('check', trace('password is required', 'config_error'), 1)).toEqual({
      ok: true,
      operation: 'check',
      result: { status: 'FAILED', message: 'password is required' },
      logs: [],
    });
    expect(outcome('check', trace('the API is down'), 1)).toMatchObject({
      ok: false,
      error: 'the API is down',
    });
  });

  it('collects the real example source', async () => {
    const file = fileWriter();
    const collector = new OperationOutcomeCollector('check');
    const run = await runConnector(SOURCE, [
      'check',
      '--config',
      file('bad.json', { records_per_stream: 'many' }),
    ]);
    for (const line of run.lines) collector.add(line);
    expect(collector.finish({ code: run.code })).toMatchObject({
      ok: true,
      result: { status: 'FAILED', message: 'invalid config: records_per_stream must be an integer >= 0' },
    });
  });
});
