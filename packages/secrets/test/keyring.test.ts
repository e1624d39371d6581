import { randomBytes } from 'node:crypto';
import { SecretKeyring, SecretDecryptionError } from '@sluice/secrets';

describe('SecretKeyring', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it('round-trips a value and never stores the plain text', () => {
    const ring = new SecretKeyring([newKey]);
    const sealed = ring.seal('ns', 'api-token', 's3cr3t-value');
    expect(sealed.ciphertext.toString('utf8')).not.toContain('s3cr3t');
    expect(ring.open('ns', 'api-token', sealed)).toBe('s3cr3t-value');
  });

  it('decrypts with an older key after rotation and encrypts with the first', () => {
    const sealedOld = new SecretKeyring([oldKey]).seal('ns', 'a', 'v1');
    const rotated = new SecretKeyring([newKey, oldKey]);
    expect(rotated.open('ns', 'a', sealedOld)).toBe('v1');
    expect(rotated.needsRotation(sealedOld)).toBe(true);
    expect(rotated.needsRotation(rotated.seal('ns', 'a', 'v2'))).toBe(false);
  });

  it('refuses a value moved to another secret or a missing key', () => {
    const ring = new SecretKeyring([newKey]);
    const sealed = ring.seal('ns', 'a', 'v');
    expect(() => ring.open('ns', 'b', sealed)).toThrow(SecretDecryptionError);
    expect(() => new SecretKeyring([randomBytes(32)]).open('ns', 'a', sealed)).toThrow(
      /not in SLUICE_MASTER_KEYS/,
    );
  });

  it('rejects keys of the wrong length', () => {
    expect(() => new SecretKeyring([randomBytes(16)])).toThrow(/32 bytes/);
  });
});
