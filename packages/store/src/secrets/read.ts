import { query, type Queryable } from '../handle';
import type { SealedSecret } from './write';

export async function listSecretNames(
  db: Queryable,
  namespace: string,
): Promise<Array<{ name: string; updatedAt: Date }>> {
  const r = await query<{ name: string; updated_at: Date }>(
    db,
    'SELECT name, updated_at FROM secrets WHERE namespace = $1 ORDER BY name',
    [namespace],
  );
  return r.rows.map((row) => ({ name: row.name, updatedAt: row.updated_at }));
}

/** The sealed secrets of `names` that exist in the namespace, by name. */
export async function readSealedSecrets(
  db: Queryable,
  namespace: string,
  names: string[],
): Promise<Map<string, SealedSecret>> {
  if (names.length === 0) return new Map();
  const r = await query<{ name: string; key_id: string; iv: Buffer; tag: Buffer; ciphertext: Buffer }>(
    db,
    'SELECT name, key_id, iv, tag, ciphertext FROM secrets WHERE namespace = $1 AND name = ANY($2)',
    [namespace, names],
  );
  return new Map(
    r.rows.map((row) => [
      row.name,
      { keyId: row.key_id, iv: row.iv, tag: row.tag, ciphertext: row.ciphertext },
    ]),
  );
}
