import {
  DEFAULT_WORKSPACE,
  putSealedSecret,
  readSealedSecrets,
  type NamespaceKey,
  type Queryable,
} from '@sluice/store';
import type { SecretKeyring } from '@sluice/secrets';

export class MissingSecretError extends Error {
  readonly status = 422;
  constructor(namespace: string, name: string, variable: string) {
    super(`env ${variable}: secret "${name}" is not set in namespace ${namespace}`);
    this.name = 'MissingSecretError';
  }
}

/**
 * What the keyring binds a sealed value to besides its name (the AES-GCM
 * associated data): the namespace and its workspace, so a value copied to
 * another workspace's row does not open. Values of the `default` workspace
 * were sealed before workspaces existed, under the namespace alone, and keep
 * that binding (namespace names hold no '/', so the two forms cannot collide).
 */
export function sealingScope(ns: NamespaceKey): string {
  return ns.workspace === DEFAULT_WORKSPACE ? ns.namespace : `${ns.workspace}/${ns.namespace}`;
}

/** Seals the value with the keyring and stores it; the plain value is never written. */
export async function putSecret(
  db: Queryable,
  keyring: SecretKeyring,
  ns: NamespaceKey,
  name: string,
  value: string,
): Promise<void> {
  await putSealedSecret(db, ns, name, keyring.seal(sealingScope(ns), name, value));
}

type EnvSpec = Record<string, string | { secret: string }>;

/**
 * The task's environment with secret references replaced by their values,
 * looked up in the namespace `ns` of its workspace only. Only the runner API
 * calls this; the result is never stored or logged.
 */
export async function resolveTaskEnv(
  db: Queryable,
  keyring: SecretKeyring,
  ns: NamespaceKey,
  env: EnvSpec | undefined,
): Promise<Record<string, string>> {
  const resolved: Record<string, string> = {};
  const wanted = Object.entries(env ?? {});
  const names = [...new Set(wanted.flatMap(([, v]) => (typeof v === 'string' ? [] : [v.secret])))];
  const scope = { workspace: ns.workspace, namespace: ns.namespace };
  const byName = await readSealedSecrets(db, scope, names);
  for (const [variable, value] of wanted) {
    if (typeof value === 'string') {
      resolved[variable] = value;
      continue;
    }
    const sealed = byName.get(value.secret);
    if (!sealed) throw new MissingSecretError(ns.namespace, value.secret, variable);
    resolved[variable] = keyring.open(sealingScope(scope), value.secret, sealed);
  }
  return resolved;
}
