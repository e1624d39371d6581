import { getSyncState, readSealedSecrets, type NamespaceKey, type Queryable } from '@sluice/store';
import type { SecretKeyring } from '@sluice/secrets';
import { ConnectorTaskPart, SyncTaskPart } from '@sluice/protocol';
import { MissingSecretError, sealingScope } from './secrets';

/** The stored spec of a connector task (the flow's task, templates rendered). */
interface StoredConnectorTask {
  operation?: unknown;
  connector?: { command?: string[]; image?: string };
  config?: Record<string, unknown>;
}

class MissingConfigSecretError extends MissingSecretError {
  constructor(namespace: string, name: string, path: string) {
    super(namespace, name, path);
    this.message = `${path}: secret "${name}" is not set in namespace ${namespace}`;
  }
}

interface SecretRefAt {
  path: string;
  name: string;
  /** Puts the resolved value where the reference was. */
  replace: (value: string) => void;
}

/** `{ secret: name }` and nothing else: the same reference a task's env takes (docs/connectors.md). */
function secretNameOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  const name = (value as { secret?: unknown }).secret;
  return keys.length === 1 && typeof name === 'string' && name !== '' ? name : undefined;
}

/** A copy of the config in which every secret reference, at any depth, is collected into `refs`. */
function copyWithRefs(value: unknown, path: string, refs: SecretRefAt[]): unknown {
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [] : {};
  for (const [key, item] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
    const name = secretNameOf(item);
    const set = (v: unknown): void => void ((copy as Record<string, unknown>)[key] = v);
    if (name) refs.push({ path: at, name, replace: set });
    else set(copyWithRefs(item, at, refs));
  }
  return copy;
}

/** Resolves every secret reference of the collected `refs` in place; returns the values (for masking). */
async function resolveRefs(
  db: Queryable,
  keyring: SecretKeyring,
  ns: NamespaceKey,
  refs: SecretRefAt[],
): Promise<string[]> {
  const scope = { workspace: ns.workspace, namespace: ns.namespace };
  const byName = await readSealedSecrets(db, scope, [...new Set(refs.map((r) => r.name))]);
  const secretValues: string[] = [];
  for (const ref of refs) {
    const sealed = byName.get(ref.name);
    if (!sealed) throw new MissingConfigSecretError(ns.namespace, ref.name, ref.path);
    const value = keyring.open(sealingScope(scope), ref.name, sealed);
    ref.replace(value);
    secretValues.push(value);
  }
  return secretValues;
}

/**
 * The runner's part of a connector task: its config with every secret
 * reference replaced by its value, looked up in the execution's own
 * workspace and namespace, and those values (for the runner to mask).
 */
export async function connectorTaskPart(
  db: Queryable,
  keyring: SecretKeyring,
  ns: NamespaceKey,
  task: StoredConnectorTask,
): Promise<{ part: ConnectorTaskPart; secretValues: string[] }> {
  const refs: SecretRefAt[] = [];
  const config = copyWithRefs(task.config ?? {}, 'config', refs) as Record<string, unknown>;
  const secretValues = await resolveRefs(db, keyring, ns, refs);
  const part = ConnectorTaskPart.parse({
    type: 'connector',
    operation: task.operation,
    ...(task.connector?.command ? { command: task.connector.command } : {}),
    ...(task.connector?.image ? { image: task.connector.image } : {}),
    config,
  });
  return { part, secretValues };
}

/** The stored spec of a sync task (the flow's task, templates rendered). */
interface StoredSyncTask {
  source?: { command?: string[]; image?: string; config?: Record<string, unknown> };
  destination?: { command?: string[]; image?: string; config?: Record<string, unknown> };
  catalog?: unknown;
}

/**
 * The runner's part of a sync task: both configs with their secret references
 * resolved (as for a connector task, paths `source.config…` and
 * `destination.config…`), the configured catalog, and the connection's
 * committed state right now (keyed by the execution's flow and the task id),
 * where this attempt starts.
 */
export async function syncTaskPart(
  db: Queryable,
  keyring: SecretKeyring,
  execution: NamespaceKey & { flowId: string },
  taskId: string,
  task: StoredSyncTask,
): Promise<{ part: SyncTaskPart; secretValues: string[] }> {
  const refs: SecretRefAt[] = [];
  const endpoint = (name: 'source' | 'destination') => {
    const e = task[name] ?? {};
    return {
      ...(e.command ? { command: e.command } : {}),
      ...(e.image ? { image: e.image } : {}),
      config: copyWithRefs(e.config ?? {}, `${name}.config`, refs) as Record<string, unknown>,
    };
  };
  const source = endpoint('source');
  const destination = endpoint('destination');
  const secretValues = await resolveRefs(db, keyring, execution, refs);
  const committed = await getSyncState(db, {
    workspace: execution.workspace,
    namespace: execution.namespace,
    flowId: execution.flowId,
    taskId,
  });
  const part = SyncTaskPart.parse({
    type: 'sync',
    source,
    destination,
    catalog: task.catalog ?? { streams: [] },
    committedState: committed.map((c) => ({ stateType: c.stateType, stream: c.stream, state: c.state })),
  });
  return { part, secretValues };
}
