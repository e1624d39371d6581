import { applyCommittedState, AirbyteState, type CommittedState } from '@sluice/connector-protocol';
import type { SyncCommittedEntry } from '@sluice/protocol';

/**
 * The committed state the spec carries, for the StateTracker to start from.
 * Each entry is the source's own state object (what it emitted, nothing
 * added), so parsing it with the protocol's schema keeps every field.
 */
export function initialCommittedState(entries: readonly SyncCommittedEntry[]): CommittedState | undefined {
  let committed: CommittedState | undefined;
  for (const entry of entries) {
    const parsed = AirbyteState.safeParse(withType(JSON.parse(entry.state) as unknown, entry.stateType));
    if (!parsed.success) throw new Error(`the committed ${entry.stateType} state is not a connector state`);
    committed = applyCommittedState(committed, parsed.data);
  }
  return committed;
}

/**
 * The content of the source's `--state` file, or undefined for none: the
 * stored texts themselves for STREAM and GLOBAL (a list of state objects;
 * nothing re-serialized, so a cursor is byte for byte what the source sent),
 * the bare `data` blob for LEGACY, the format legacy sources read.
 */
export function stateFileBody(entries: readonly SyncCommittedEntry[]): string | undefined {
  if (entries.length === 0) return undefined;
  const legacy = entries.find((e) => e.stateType === 'LEGACY');
  if (legacy) return JSON.stringify((JSON.parse(legacy.state) as { data?: unknown }).data ?? {});
  return `[${entries.map((e) => e.state).join(',')}]`;
}

/** A LEGACY state may have no `type` (the protocol's rule); the schema's union needs one to pick. */
function withType(state: unknown, type: SyncCommittedEntry['stateType']): unknown {
  if (typeof state !== 'object' || state === null || 'type' in state) return state;
  return { ...state, type };
}
