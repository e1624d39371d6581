import {
  bool,
  decodeMasterKey,
  duration,
  executorSelection,
  hostPort,
  int,
  list,
  masterKeyList,
  parseDuration,
} from '../src';

describe('duration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['30d', 2_592_000_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['15', 15_000],
  ])('reads %s as %d ms', (text, ms) => {
    expect(duration().parse(text)).toBe(ms);
  });

  it.each(['soon', '5 minutes', '-5s', '5x', 's'])('refuses %s', (text) => {
    expect(duration().safeParse(text).success).toBe(false);
  });

  it('refuses zero unless zero is allowed', () => {
    expect(duration().safeParse('0s').success).toBe(false);
    expect(duration({ allowZero: true }).parse('0')).toBe(0);
  });

  it('parseDuration returns undefined for nonsense', () => {
    expect(parseDuration('abc')).toBeUndefined();
  });
});

describe('list, int, bool, hostPort', () => {
  it('trims list entries and drops empty ones', () => {
    expect(list().parse(' gpu, ,default ,')).toEqual(['gpu', 'default']);
    expect(list({ min: 1 }).safeParse(' , ').success).toBe(false);
  });

  it('reads whole numbers within bounds only', () => {
    expect(int({ min: 0 }).parse(' 8 ')).toBe(8);
    expect(int({ min: 0 }).safeParse('-1').success).toBe(false);
    expect(int().safeParse('2.5').success).toBe(false);
    expect(int().safeParse('8 slots').success).toBe(false);
  });

  it('reads the usual spellings of booleans', () => {
    expect(['true', 'YES', '1', 'on'].map((v) => bool().parse(v))).toEqual([true, true, true, true]);
    expect(['false', 'No', '0', 'off'].map((v) => bool().parse(v))).toEqual([false, false, false, false]);
    expect(bool().safeParse('maybe').success).toBe(false);
  });

  it('accepts host:port and bracketed IPv6 only', () => {
    expect(hostPort().parse('0.0.0.0:8080')).toBe('0.0.0.0:8080');
    expect(hostPort().parse('[::]:8081')).toBe('[::]:8081');
    expect(hostPort().parse('127.0.0.1:0')).toBe('127.0.0.1:0');
    for (const bad of ['8080', 'localhost', 'host:99999', 'http://x:1']) {
      expect(hostPort().safeParse(bad).success).toBe(false);
    }
  });
});

describe('executor selection', () => {
  it('keeps auto, and always adds inline to an explicit list', () => {
    expect(executorSelection().parse('auto')).toBe('auto');
    expect(executorSelection().parse('kubernetes, process')).toEqual(['inline', 'process', 'kubernetes']);
  });

  it('names an unknown executor', () => {
    const result = executorSelection().safeParse('process,podman');
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toContain('podman');
  });
});

describe('master keys', () => {
  const key = Buffer.alloc(32, 7);

  it('decodes base64, URL-safe base64 and hex of 32 bytes', () => {
    expect(decodeMasterKey(key.toString('base64'))).toEqual(key);
    expect(decodeMasterKey(key.toString('base64url'))).toEqual(key);
    expect(decodeMasterKey(key.toString('hex'))).toEqual(key);
  });

  it('refuses keys of another length', () => {
    expect(decodeMasterKey(Buffer.alloc(16).toString('base64'))).toBeUndefined();
    expect(decodeMasterKey('abc')).toBeUndefined();
  });

  it('says which list entry is bad without echoing it', () => {
    const bad = 'not-a-key-at-all';
    const result = masterKeyList().safeParse(`${key.toString('base64')},${bad}`);
    expect(result.success).toBe(false);
    const message = result.error?.issues[0]?.message ?? '';
    expect(message).toContain('entry 2');
    expect(message).not.toContain(bad);
  });
});
