import type { Queryable } from '@sluice/store';
import type { SecretKeyring } from '@sluice/secrets';

export class MissingSecretError extends Error {
  readonly status = 422;
  constructor(namespace: string, name: string, variable: string) {
    super(`env ${variable}: secret "${name}" is not set in namespace ${namespace}`);
    this.name = 'MissingSecretError';
  }
}

export async function putSecret(
  db: Queryable,
  keyring: SecretKeyring,
  namespace: string,
  name: string,
  value: string,
): Promise<void> {
  const sealed = keyring.seal(namespace, name, value);
  await db.query(
    `INSERT INTO secrets (namespace, name, key_id, iv, tag, ciphertext, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, now())
     ON CONFLICT (namespace, name) DO UPDATE
       SET key_id = EXCLUDED.key_id, iv = EXCLUDED.iv, tag = EXCLUDED.tag, ciphertext = EXCLUDED.ciphertext, updated_at = now()`,
    [namespace, name, sealed.keyId, sealed.iv, sealed.tag, sealed.ciphertext],
  );
}

export async function deleteSecret(db: Queryable, namespace: string, name: string): Promise<boolean> {
  const r = await db.query('DELETE FROM secrets WHERE namespace = $1 AND name = $2', [namespace, name]);
  return (r.rowCount ?? 0) > 0;
}

export async function listSecretNames(
  db: Queryable,
  namespace: string,
): Promise<Array<{ name: string; updatedAt: Date }>> {
  const r = await db.query<{ name: string; updated_at: Date }>(
    'SELECT name, updated_at FROM secrets WHERE namespace = $1 ORDER BY name',
    [namespace],
  );
  return r.rows.map((row) => ({ name: row.name, updatedAt: row.updated_at }));
}

type EnvSpec = Record<string, string | { secret: string }>;

/**
 * The task's environment with secret references replaced by their values.
 * Only the runner API calls this; the result is never stored or logged.
 */
export async function resolveTaskEnv(
  db: Queryable,
  keyring: SecretKeyring,
  namespace: string,
  env: EnvSpec | undefined,
): Promise<Record<string, string>> {
  const resolved: Record<string, string> = {};
  const wanted = Object.entries(env ?? {});
  const names = [...new Set(wanted.flatMap(([, v]) => (typeof v === 'string' ? [] : [v.secret])))];
  const rows = names.length
    ? (
        await db.query<{ name: string; key_id: string; iv: Buffer; tag: Buffer; ciphertext: Buffer }>(
          'SELECT name, key_id, iv, tag, ciphertext FROM secrets WHERE namespace = $1 AND name = ANY($2)',
          [namespace, names],
        )
      ).rows
    : [];
  const byName = new Map(rows.map((r) => [r.name, r]));
  for (const [variable, value] of wanted) {
    if (typeof value === 'string') {
      resolved[variable] = value;
      continue;
    }
    const row = byName.get(value.secret);
    if (!row) throw new MissingSecretError(namespace, value.secret, variable);
    resolved[variable] = keyring.open(namespace, value.secret, {
      keyId: row.key_id,
      iv: row.iv,
      tag: row.tag,
      ciphertext: row.ciphertext,
    });
  }
  return resolved;
}
