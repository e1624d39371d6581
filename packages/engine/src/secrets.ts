import { putSealedSecret, readSealedSecrets, type Queryable } from '@sluice/store';
import type { SecretKeyring } from '@sluice/secrets';

export class MissingSecretError extends Error {
  readonly status = 422;
  constructor(namespace: string, name: string, variable: string) {
    super(`env ${variable}: secret "${name}" is not set in namespace ${namespace}`);
    this.name = 'MissingSecretError';
  }
}

/** Seals the value with the keyring and stores it; the plain value is never written. */
export async function putSecret(
  db: Queryable,
  keyring: SecretKeyring,
  namespace: string,
  name: string,
  value: string,
): Promise<void> {
  await putSealedSecret(db, namespace, name, keyring.seal(namespace, name, value));
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
  const byName = await readSealedSecrets(db, namespace, names);
  for (const [variable, value] of wanted) {
    if (typeof value === 'string') {
      resolved[variable] = value;
      continue;
    }
    const sealed = byName.get(value.secret);
    if (!sealed) throw new MissingSecretError(namespace, value.secret, variable);
    resolved[variable] = keyring.open(namespace, value.secret, sealed);
  }
  return resolved;
}
