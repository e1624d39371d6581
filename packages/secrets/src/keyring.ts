import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** One encrypted secret value as stored: never the plain text. */
export interface SealedSecret {
  keyId: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

export class SecretDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretDecryptionError';
  }
}

/** Short, stable key id: lets decryption pick the right key after a rotation without trying them all. */
function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/**
 * AES-256-GCM under SLUICE_MASTER_KEYS: the first key encrypts, every key
 * decrypts, so keys rotate by putting the new one first. The namespace and
 * name are bound as associated data, so a sealed value copied to another
 * secret's row does not decrypt.
 */
export class SecretKeyring {
  private readonly keys: Array<{ id: string; key: Buffer }>;

  constructor(masterKeys: Buffer[]) {
    if (masterKeys.length === 0) throw new Error('SLUICE_MASTER_KEYS: at least one key is required');
    for (const k of masterKeys) {
      if (k.length !== 32) throw new Error('SLUICE_MASTER_KEYS: every key must be 32 bytes');
    }
    this.keys = masterKeys.map((key) => ({ id: keyIdOf(key), key }));
  }

  seal(namespace: string, name: string, plaintext: string): SealedSecret {
    const primary = this.keys[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', primary.key, iv);
    cipher.setAAD(Buffer.from(`${namespace}\0${name}`));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId: primary.id, iv, tag: cipher.getAuthTag(), ciphertext };
  }

  open(namespace: string, name: string, sealed: SealedSecret): string {
    const entry = this.keys.find((k) => k.id === sealed.keyId);
    if (!entry) {
      throw new SecretDecryptionError(
        `secret ${namespace}/${name} was encrypted with key ${sealed.keyId}, which is not in SLUICE_MASTER_KEYS`,
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.key, sealed.iv);
      decipher.setAAD(Buffer.from(`${namespace}\0${name}`));
      decipher.setAuthTag(sealed.tag);
      return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptionError(
        `secret ${namespace}/${name} failed authentication: it was altered or moved`,
      );
    }
  }

  /** Whether a stored value is under an older key and would be re-sealed by a rotation. */
  needsRotation(sealed: SealedSecret): boolean {
    return sealed.keyId !== this.keys[0]!.id;
  }
}

export function generateMasterKey(): string {
  return randomBytes(32).toString('base64');
}
