import { query, type Queryable } from '../handle';
import type { NamespaceKey } from '../workspaces';

/** A secret as stored: sealed by the keyring (AES-GCM), never the plain value. */
export interface SealedSecret {
  keyId: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

export async function putSealedSecret(
  db: Queryable,
  ns: NamespaceKey,
  name: string,
  sealed: SealedSecret,
): Promise<void> {
  await query(
    db,
    `INSERT INTO secrets (workspace, namespace, name, key_id, iv, tag, ciphertext, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now())
     ON CONFLICT (workspace, namespace, name) DO UPDATE
       SET key_id = EXCLUDED.key_id, iv = EXCLUDED.iv, tag = EXCLUDED.tag, ciphertext = EXCLUDED.ciphertext, updated_at = now()`,
    [ns.workspace, ns.namespace, name, sealed.keyId, sealed.iv, sealed.tag, sealed.ciphertext],
  );
}

/** False when there was no such secret. */
export async function deleteSecret(db: Queryable, ns: NamespaceKey, name: string): Promise<boolean> {
  const r = await query(db, 'DELETE FROM secrets WHERE workspace = $1 AND namespace = $2 AND name = $3', [
    ns.workspace,
    ns.namespace,
    name,
  ]);
  return (r.rowCount ?? 0) > 0;
}
