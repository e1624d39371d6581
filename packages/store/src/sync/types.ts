import type { NamespaceKey } from '../workspaces';

/**
 * Which sync task a state belongs to: its flow and task id. A connection is a
 * flow with a schedule and a sync task, so this is the connection's key.
 */
export interface SyncKey extends NamespaceKey {
  flowId: string;
  taskId: string;
}

export type SyncStateType = 'STREAM' | 'GLOBAL' | 'LEGACY';

/** A stream of a configured catalog; `namespace` null when it has none. */
export interface SyncStream {
  name: string;
  namespace: string | null;
}

export interface SyncCounts {
  records: number;
  bytes: number;
}

/** One committed state of a key: a stream's (STREAM) or the whole key's (GLOBAL, LEGACY). */
export interface SyncStateEntry {
  stateType: SyncStateType;
  /** The stream of a STREAM state; null for GLOBAL and LEGACY. */
  stream: SyncStream | null;
  /** The source's state object as JSON text, as the runner committed it. */
  state: string;
  executionId: string;
  taskRunId: string;
  updatedAt: Date;
}

/** One row of the commit ledger. */
export interface SyncCommitEntry {
  /** Ledger order (a bigint, as a string); newer commits have larger ids. */
  id: string;
  executionId: string;
  taskRunId: string;
  attempt: number;
  /** The source's state number in its attempt (1, 2, ...). */
  sequence: number;
  stateType: SyncStateType;
  stream: SyncStream | null;
  records: number;
  bytes: number;
  /** Per stream key (`namespace.name` or `name`). */
  streams: Record<string, SyncCounts>;
  committedAt: Date;
}

/** The stream columns: '' stands for "no namespace", and both '' for the GLOBAL/LEGACY row. */
export function streamColumns(stream: SyncStream | null): [string, string] {
  return stream ? [stream.namespace ?? '', stream.name] : ['', ''];
}

export function streamOfColumns(namespace: string, name: string): SyncStream | null {
  return name === '' ? null : { name, namespace: namespace === '' ? null : namespace };
}
