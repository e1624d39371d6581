import { query, type Queryable } from '../handle';
import type { NamespaceKey } from '../workspaces';
import type { SealedSecret } from './write';

export async function listSecretNames(
  db: Queryable,
  ns: NamespaceKey,
): Promise<Array<{ name: string; updatedAt: Date }>> {
  const r = await query<{ name: string; updated_at: Date }>(
    db,
    'SELECT name, updated_at FROM secrets WHERE workspace = $1 AND namespace = $2 ORDER BY name',
    [ns.workspace, ns.namespace],
  );
  return r.rows.map((row) => ({ name: row.name, updatedAt: row.updated_at }));
}

/** The sealed secrets of `names` that exist in the namespace (of that workspace only), by name. */
export async function readSealedSecrets(
  db: Queryable,
  ns: NamespaceKey,
  names: string[],
): Promise<Map<string, SealedSecret>> {
  if (names.length === 0) return new Map();
  const r = await query<{ name: string; key_id: string; iv: Buffer; tag: Buffer; ciphertext: Buffer }>(
    db,
    'SELECT name, key_id, iv, tag, ciphertext FROM secrets WHERE workspace = $1 AND namespace = $2 AND name = ANY($3)',
    [ns.workspace, ns.namespace, names],
  );
  return new Map(
    r.rows.map((row) => [
      row.name,
      { keyId: row.key_id, iv: row.iv, tag: row.tag, ciphertext: row.ciphertext },
    ]),
  );
}
