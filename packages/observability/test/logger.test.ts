import { PassThrough } from 'node:stream';
import { createLogger, forgetSecretValue, registerSecretValue, redactValue, type Logger } from '../src';

/** A logger writing to memory, and the parsed JSON lines it wrote so far. */
function memoryLogger(level: 'info' | 'debug' = 'info'): {
  logger: Logger;
  lines: () => Record<string, unknown>[];
} {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  const logger = createLogger({ service: 'test-service', level, stream });
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const SECRET = 'sk-live-4f1c9e2b7a';
afterEach(() => forgetSecretValue(SECRET));

describe('createLogger', () => {
  it('writes one JSON object per line with timestamp, level, service, message and fields', () => {
    const { logger, lines } = memoryLogger();
    logger.info('claimed task run', { taskRunId: 'tr_1', attempt: 2 });
    logger.debug('not written at info');
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'info',
        service: 'test-service',
        message: 'claimed task run',
        taskRunId: 'tr_1',
        attempt: 2,
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      }),
    ]);
  });

  it('replaces the values of sensitive field names, at any depth', () => {
    const { logger, lines } = memoryLogger();
    logger.info('config', {
      token: 'abc',
      dbDsn: 'postgres://x',
      nested: { password: 'hunter2', authorization: 'Bearer x', masterKeys: ['k'], pools: ['gpu'] },
    });
    expect(lines()[0]).toMatchObject({
      token: '[redacted]',
      dbDsn: '[redacted]',
      nested: {
        password: '[redacted]',
        authorization: '[redacted]',
        masterKeys: '[redacted]',
        pools: ['gpu'],
      },
    });
  });

  it('cuts a registered secret value out of messages, fields and error stacks', () => {
    registerSecretValue(SECRET);
    const { logger, lines } = memoryLogger();
    logger.info(`task printed ${SECRET} to stdout`, {
      line: `API_TOKEN=${SECRET}`,
      items: [{ out: SECRET }],
    });
    logger.error(new Error(`request with ${SECRET} failed`));
    const output = JSON.stringify(lines());
    expect(output).not.toContain(SECRET);
    expect(lines()[0]).toMatchObject({
      message: 'task printed [redacted] to stdout',
      line: 'API_TOKEN=[redacted]',
      items: [{ out: '[redacted]' }],
    });
    expect(lines()[1]?.message).toBe('request with [redacted] failed');
    expect(String(lines()[1]?.stack)).toContain('request with [redacted] failed');
  });

  it('ignores registered values shorter than 6 characters', () => {
    registerSecretValue('abc12');
    const { logger, lines } = memoryLogger();
    logger.info('abc12 stays');
    expect(lines()[0]?.message).toBe('abc12 stays');
  });

  it('hides URL passwords', () => {
    const { logger, lines } = memoryLogger();
    logger.warn('cannot reach postgres://sluice:pa55word@db:5432/sluice');
    expect(lines()[0]?.message).toBe('cannot reach postgres://sluice:[redacted]@db:5432/sluice');
  });
});

describe('redactValue', () => {
  it('returns a copy and leaves the caller’s object alone', () => {
    registerSecretValue(SECRET);
    const input = { nested: { text: SECRET, apiKey: 'k' }, key: Buffer.alloc(32) };
    expect(redactValue(input)).toEqual({
      nested: { text: '[redacted]', apiKey: '[redacted]' },
      key: '[redacted]',
    });
    expect(input.nested.text).toBe(SECRET);
  });

  it('does not print the bytes of buffers and survives cycles', () => {
    const cyclic: Record<string, unknown> = { bytes: Buffer.from('raw key material') };
    cyclic.self = cyclic;
    expect(redactValue(cyclic)).toEqual({ bytes: '[binary 16 bytes]', self: '[circular]' });
  });
});
