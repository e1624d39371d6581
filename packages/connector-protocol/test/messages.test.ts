import { Readable } from 'node:stream';
import {
  ConnectorOutputParser,
  parseLine,
  readConnectorOutput,
  readConnectorOutputBatches,
  serializeMessage,
  stateType,
  type ConnectorMessage,
  type ParsedLine,
  type StateMessage,
} from '@sluice/connector-protocol';

const now = 1_764_576_000_000;

/** One valid message of every type, each with a field the protocol does not define. */
const examples: ConnectorMessage[] = [
  {
    type: 'RECORD',
    record: {
      stream: 'users',
      namespace: 'app',
      data: { id: 1, name: 'Ada' },
      emitted_at: now,
      meta: { x: 1 },
    },
  },
  {
    type: 'STATE',
    state: {
      type: 'STREAM',
      stream: { stream_descriptor: { name: 'users' }, stream_state: { cursor: 5 } },
      sourceStats: { recordCount: 5 },
    },
  },
  {
    type: 'STATE',
    state: {
      type: 'GLOBAL',
      global: {
        shared_state: { lsn: 42 },
        stream_states: [{ stream_descriptor: { name: 'users', namespace: 'app' }, stream_state: { c: 1 } }],
      },
    },
  },
  { type: 'STATE', state: { type: 'LEGACY', data: { users: 5 } } },
  { type: 'STATE', state: { data: { users: 5 } } },
  { type: 'LOG', log: { level: 'WARN', message: 'slow', stack_trace: 'at x', thread: 'main' } },
  {
    type: 'SPEC',
    spec: {
      connectionSpecification: { type: 'object', properties: {} },
      documentationUrl: 'https://example.com/docs',
      supportsIncremental: true,
      supported_destination_sync_modes: ['append', 'overwrite', 'append_dedup'],
      advanced_auth: { auth_flow_type: 'oauth2.0' },
    },
  },
  { type: 'CONNECTION_STATUS', connectionStatus: { status: 'FAILED', message: 'bad password' } },
  {
    type: 'CATALOG',
    catalog: {
      streams: [
        {
          name: 'users',
          json_schema: { type: 'object', properties: { id: { type: 'integer' } } },
          supported_sync_modes: ['full_refresh', 'incremental'],
          source_defined_cursor: true,
          default_cursor_field: ['id'],
          source_defined_primary_key: [['id']],
          namespace: 'app',
          is_resumable: true,
        },
      ],
    },
  },
  {
    type: 'TRACE',
    trace: {
      type: 'ERROR',
      emitted_at: now,
      error: { message: 'boom', internal_message: 'E42', stack_trace: 'at y', failure_type: 'config_error' },
    },
  },
  {
    type: 'TRACE',
    trace: {
      type: 'STREAM_STATUS',
      emitted_at: now,
      stream_status: { stream_descriptor: { name: 'users' }, status: 'COMPLETE' },
    },
  },
  {
    type: 'CONTROL',
    control: { type: 'CONNECTOR_CONFIG', emitted_at: now, connectorConfig: { config: { token: 'new' } } },
  },
];

function only(parsed: ParsedLine[]): ParsedLine {
  expect(parsed).toHaveLength(1);
  return parsed[0]!;
}

function errorText(parsed: ParsedLine): string {
  if (parsed.kind !== 'error') throw new Error(`expected an error, got ${parsed.kind}`);
  return parsed.error.message;
}

describe('connector messages', () => {
  it.each(examples.map((m) => [m.type, m] as const))(
    '%s round-trips with its unknown fields kept',
    (_t, m) => {
      const line = serializeMessage(m);
      expect(line.endsWith('\n')).toBe(true);
      expect(line.indexOf('\n')).toBe(line.length - 1);
      const parsed = only(new ConnectorOutputParser().push(line));
      expect(parsed).toMatchObject({ kind: 'message', line: 1, text: line.slice(0, -1) });
      if (parsed.kind !== 'message') throw new Error('not a message');
      expect(parsed.message).toEqual(m);
      expect(serializeMessage(parsed.message)).toBe(line);
    },
  );

  it('reads a state without a type as LEGACY and does not add a type to it', () => {
    const parsed = parseLine('{"type":"STATE","state":{"data":{"c":1}}}', 1);
    if (parsed.kind !== 'message' || parsed.message.type !== 'STATE') throw new Error('not a state');
    expect(stateType(parsed.message.state)).toBe('LEGACY');
    expect(parsed.message.state).toEqual({ data: { c: 1 } });
  });

  it('keeps a message of an unknown type apart, not as a failure', () => {
    const parsed = parseLine('{"type":"DESTINATION_CATALOG","catalog":{"x":1}}', 7);
    expect(parsed).toEqual({
      kind: 'unknown',
      line: 7,
      type: 'DESTINATION_CATALOG',
      value: { type: 'DESTINATION_CATALOG', catalog: { x: 1 } },
      text: '{"type":"DESTINATION_CATALOG","catalog":{"x":1}}',
      bytes: 48,
    });
  });

  it('reports a known type with a bad shape with the line number, path and problem', () => {
    const bad = (text: string) => errorText(parseLine(text, 42));
    expect(bad('{"type":"RECORD","record":{"stream":7,"data":{},"emitted_at":1}}')).toBe(
      'line 42: RECORD record.stream: expected string, received number',
    );
    expect(bad('{"type":"RECORD","record":{"stream":"s","data":[1],"emitted_at":1}}')).toBe(
      'line 42: RECORD record.data: expected object',
    );
    expect(bad('{"type":"RECORD","record":{"stream":"s","data":{}}}')).toBe(
      'line 42: RECORD record.emitted_at: expected number, received undefined',
    );
    expect(bad('{"type":"STATE","state":{"type":"STREAM","stream":{"stream_state":{}}}}')).toMatch(
      /^line 42: STATE state\.stream\.stream_descriptor: expected object/,
    );
    expect(bad('{"type":"STATE","state":{"type":"PER_STREAM"}}')).toMatch(/^line 42: STATE state\.type: /);
    expect(bad('{"type":"CONNECTION_STATUS","connectionStatus":{"status":"OK"}}')).toMatch(
      /^line 42: CONNECTION_STATUS connectionStatus\.status: /,
    );
    const parsed = parseLine('{"type":"LOG"}', 3);
    if (parsed.kind !== 'error') throw new Error('not an error');
    expect(parsed.error).toMatchObject({
      line: 3,
      code: 'invalid_message',
      detail: 'LOG log: expected object, received undefined',
      messageType: 'LOG',
    });
  });

  it('keeps lines that are not protocol messages as log lines', () => {
    for (const text of [
      'WARNING: An illegal reflective access operation has occurred',
      '{not json',
      '42',
      '"a string"',
      '[1,2]',
      '{"level":"info","msg":"a JSON log line without a type"}',
      '{"type":5}',
    ]) {
      expect(parseLine(text, 9)).toEqual({
        kind: 'non-protocol',
        line: 9,
        text,
        bytes: Buffer.byteLength(text),
      });
    }
  });
});

describe('the line splitter', () => {
  const record = (i: number, payload = 'x') =>
    serializeMessage({ type: 'RECORD', record: { stream: 's', data: { i, payload }, emitted_at: now } });

  async function collect(chunks: Array<Buffer | string>, maxLineBytes?: number): Promise<ParsedLine[]> {
    const out: ParsedLine[] = [];
    for await (const p of readConnectorOutput(Readable.from(chunks), { maxLineBytes })) out.push(p);
    return out;
  }

  it('joins a message split across many tiny chunks, also inside multibyte UTF-8 characters', async () => {
    const text = record(1, 'héllo wörld — 日本語 🎉') + record(2, 'ünïcödé');
    const bytes = Buffer.from(text);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 1) chunks.push(bytes.subarray(i, i + 1));
    const parsed = await collect(chunks);
    expect(
      parsed.map((p) => (p.kind === 'message' && p.message.type === 'RECORD' ? p.message.record.data : p)),
    ).toEqual([
      { i: 1, payload: 'héllo wörld — 日本語 🎉' },
      { i: 2, payload: 'ünïcödé' },
    ]);
    expect(parsed.map((p) => p.line)).toEqual([1, 2]);
  });

  it('parses the same lines whatever the chunk boundaries', () => {
    const text = Buffer.from(record(1, 'ä'.repeat(50)) + 'garbage\r\n\n' + record(2) + record(3, '€'));
    const whole = new ConnectorOutputParser().push(text);
    for (const size of [1, 2, 3, 7, 64, 1000]) {
      const parser = new ConnectorOutputParser();
      const out: ParsedLine[] = [];
      for (let i = 0; i < text.length; i += size) parser.push(text.subarray(i, i + size), out);
      parser.end(out);
      expect(out).toEqual(whole);
    }
  });

  it('accepts CRLF line ends, skips empty lines and counts them in the line numbers', async () => {
    const parsed = await collect([`\n${record(1).replace('\n', '\r\n')}\r\n   \n${record(2)}`]);
    expect(parsed.map((p) => [p.kind, p.line])).toEqual([
      ['message', 2],
      ['message', 5],
    ]);
    expect(parsed[0]).toMatchObject({ text: record(1).trimEnd() });
  });

  it('parses a last line that has no newline', async () => {
    const parsed = await collect([record(1), record(2).trimEnd()]);
    expect(parsed.map((p) => [p.kind, p.line])).toEqual([
      ['message', 1],
      ['message', 2],
    ]);
  });

  it('reports an over-long line by its number and goes on with the next lines', async () => {
    const long = record(2, 'y'.repeat(5000));
    const parsed = await collect([record(1), long, record(3)], 1024);
    expect(parsed.map((p) => [p.kind, p.line])).toEqual([
      ['message', 1],
      ['error', 2],
      ['message', 3],
    ]);
    expect(errorText(parsed[1]!)).toBe('line 2: line longer than the limit of 1024 bytes');
  });

  it('reports an over-long line as soon as it passes the limit, without holding it', () => {
    const parser = new ConnectorOutputParser({ maxLineBytes: 100 });
    expect(parser.push(record(1))).toHaveLength(1);
    expect(parser.push('{"type":"RECORD"')).toEqual([]);
    const over = parser.push('x'.repeat(200));
    expect(over).toHaveLength(1);
    expect(errorText(over[0]!)).toBe('line 2: line longer than the limit of 100 bytes');
    // The rest of that line is dropped unread; the next line is line 3.
    expect(parser.push('y'.repeat(10_000))).toEqual([]);
    expect(parser.push(`zzz\n${record(3)}`).map((p) => [p.kind, p.line])).toEqual([['message', 3]]);
  });

  it('counts the limit in bytes, not characters', () => {
    const line = `{"type":"LOG","log":{"level":"INFO","message":"${'é'.repeat(40)}"}}`;
    const bytes = Buffer.byteLength(line);
    expect(bytes).toBe(line.length + 40);
    expect(new ConnectorOutputParser({ maxLineBytes: bytes }).push(line + '\n')[0]?.kind).toBe('message');
    expect(new ConnectorOutputParser({ maxLineBytes: bytes - 1 }).push(line + '\n')[0]?.kind).toBe('error');
  });

  it('reports bytes per line as received', () => {
    const line = record(1, 'ü');
    const [parsed] = new ConnectorOutputParser().push(line);
    expect(parsed).toMatchObject({ kind: 'message', bytes: Buffer.byteLength(line) - 1 });
  });

  it('keeps garbage between messages as non-protocol lines', async () => {
    const parsed = await collect([
      `${record(1)}SLF4J: Failed to load class\n{"broken":\n${serializeMessage({
        type: 'STATE',
        state: { type: 'STREAM', stream: { stream_descriptor: { name: 's' }, stream_state: { c: 1 } } },
      } satisfies StateMessage)}`,
    ]);
    expect(parsed.map((p) => [p.kind, p.line])).toEqual([
      ['message', 1],
      ['non-protocol', 2],
      ['non-protocol', 3],
      ['message', 4],
    ]);
    expect(parsed[1]).toMatchObject({ text: 'SLF4J: Failed to load class' });
  });
});

describe('lenient fields', () => {
  it('takes null for an optional string, as several SDKs write unset fields', () => {
    for (const text of [
      '{"type":"RECORD","record":{"stream":"s","namespace":null,"data":{},"emitted_at":1}}',
      '{"type":"CONNECTION_STATUS","connectionStatus":{"status":"SUCCEEDED","message":null}}',
      '{"type":"LOG","log":{"level":"INFO","message":"m","stack_trace":null}}',
    ]) {
      expect(parseLine(text, 1).kind).toBe('message');
    }
  });

  it('accepts exactly what the RECORD schema accepts on its fast path', () => {
    const verdict = (record: unknown) => parseLine(JSON.stringify({ type: 'RECORD', record }), 1).kind;
    expect(verdict({ stream: 's', data: {}, emitted_at: 1.5, extra: [1] })).toBe('message');
    expect(verdict({ stream: 's', data: {}, emitted_at: 1, namespace: 5 })).toBe('error');
    expect(verdict({ stream: 's', data: null, emitted_at: 1 })).toBe('error');
    expect(verdict({ stream: 's', data: {}, emitted_at: '1' })).toBe('error');
    expect(verdict([1])).toBe('error');
    expect(verdict(null)).toBe('error');
  });
});

describe('reading pace', () => {
  it('reads the connector only as fast as the consumer takes its lines', async () => {
    let produced = 0;
    const line = serializeMessage({
      type: 'RECORD',
      record: { stream: 's', data: { x: 1 }, emitted_at: now },
    });
    async function* connector() {
      for (let i = 0; i < 10_000; i++) {
        produced++;
        yield Buffer.from(line.repeat(100));
      }
    }
    const batches = readConnectorOutputBatches(Readable.from(connector(), { highWaterMark: 1 }));
    for (let i = 0; i < 3; i++) await batches.next();
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Three chunks consumed; the stream's buffer holds at most a couple more, not the 10,000.
    expect(produced).toBeLessThan(8);
    await batches.return(undefined);
  });
});
