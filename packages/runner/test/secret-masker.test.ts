import { MIN_MASKED_LENGTH, SecretMasker } from '../src/secret-masker';

const SECRET = 'p@ss w/rd+"x"\\~~~?>>';
const b64 = (text: string): string => Buffer.from(text).toString('base64');
const urlSafe = (text: string): string => text.replace(/\+/g, '-').replace(/\//g, '_');

test('the value and its JSON-escaped, URL-encoded and base64 forms are all masked', () => {
  const masker = new SecretMasker([SECRET]);
  const std = b64(SECRET);
  expect(std).toMatch(/[+/]/); // so the url-safe form really differs
  for (const form of [
    SECRET,
    JSON.stringify(SECRET).slice(1, -1),
    encodeURIComponent(SECRET),
    std,
    std.replace(/=+$/, ''),
    urlSafe(std),
    urlSafe(std).replace(/=+$/, ''),
  ]) {
    expect(masker.mask(`before ${form} after`)).toBe('before *** after');
  }
});

test('base64 of a longer text that contains the value is masked at every alignment', () => {
  const masker = new SecretMasker([SECRET]);
  for (const prefix of ['', 'a', 'ab', 'abc', 'abcd']) {
    const encoded = b64(`${prefix}${SECRET} and some more text`);
    const masked = masker.mask(encoded);
    expect(masked).toContain('***');
    // What is left is at most the characters that mix the value with its neighbours.
    expect(masked.replace('***', '').length).toBeLessThan(encoded.length - SECRET.length);
  }
});

test('each line of a multi-line value is masked on its own', () => {
  const key = '-----BEGIN KEY-----\r\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----';
  const masker = new SecretMasker([key]);
  expect(masker.mask('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC')).toBe('***');
  expect(masker.mask('-----BEGIN KEY-----')).toBe('***');
  expect(masker.mask(b64(key))).toBe('***');
});

test('the longest form wins, several secrets are masked, short values are left alone', () => {
  const masker = new SecretMasker(['abcd', 'abcdefgh', 'xyz']);
  expect(masker.mask('abcdefgh abcd xyz')).toBe('*** *** xyz');
  expect(masker.mask(`base64 ${Buffer.from('xyz').toString('base64')}`)).toBe('base64 eHl6');
  expect('xyz'.length).toBeLessThan(MIN_MASKED_LENGTH);
  expect(new SecretMasker(['']).active).toBe(false);
  expect(new SecretMasker([]).mask('nothing to hide')).toBe('nothing to hide');
});

test('a cut line whose tail begins a secret has the tail masked', () => {
  const masker = new SecretMasker(['s3cr3t-value']);
  expect(masker.maskCut('output: s3cr3t-va')).toBe('output: ***');
  expect(masker.maskCut('output: s3c')).toBe('output: s3c'); // shorter than the minimum
  expect(masker.maskCut('output: s3cr3t-value and')).toBe('output: *** and');
});

test('outputs have keys and values masked', () => {
  const masker = new SecretMasker(['hunter22']);
  expect(masker.maskRecord({ token: 'Bearer hunter22', hunter22: 'x' })).toEqual({
    token: 'Bearer ***',
    '***': 'x',
  });
});
