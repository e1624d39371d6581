/**
 * The per-attempt volume through which a sync's runner and its two connector
 * containers talk on the docker executor (docs/connectors.md#sync-on-docker)
 * and the kubernetes executor (an emptyDir, docs/connectors.md#sync-on-kubernetes).
 * The layout (the FIFOs included) exists before any of the three starts: the
 * docker executor uploads it, on kubernetes the init container creates it;
 * the runner and the `sluice connector-pipe` wrapper open it.
 * A contract between @sluice/executors and @sluice/runner, hence here.
 */

/** Set in the runner's container: its sync's connectors are reached through the pipes under this directory. */
export const SYNC_DIR_ENV = 'SLUICE_SYNC_DIR';

/** Where the volume is mounted in all three containers. */
export const SYNC_MOUNT = '/sluice-sync';

export type SyncRole = 'source' | 'destination';
export const SYNC_ROLES: readonly SyncRole[] = ['source', 'destination'];

/** The FIFOs of one role (paths relative to the volume). */
export interface SyncRolePipes {
  /** Runner → wrapper: one JSON line (the start), then `kill` lines; its end tells the wrapper the runner is gone. */
  control: string;
  /** Runner → connector's stdin (the destination's records and states); the source's stdin is /dev/null. */
  stdin: string | null;
  /** Connector's stdout → runner. */
  stdout: string;
  /** Connector's stderr → runner (its log lines). */
  stderr: string;
}

/** The directory of the FIFOs (owned by root, 0755; the FIFOs are 0666 so any user of the three containers opens them). */
export const SYNC_PIPES_DIR = 'pipes';
/** World-writable and sticky, as /tmp: the wrapper's private file dir, the exit files, the runner's run dir. */
export const SYNC_WORK_DIR = 'work';

export function syncRolePipes(role: SyncRole): SyncRolePipes {
  const at = (name: string) => `${SYNC_PIPES_DIR}/${role}.${name}`;
  return {
    control: at('control'),
    stdin: role === 'destination' ? at('stdin') : null,
    stdout: at('stdout'),
    stderr: at('stderr'),
  };
}

/** Every FIFO of a sync, for the executor to create. */
export function allSyncPipes(): string[] {
  return SYNC_ROLES.flatMap((role) => {
    const p = syncRolePipes(role);
    return [p.control, p.stdin, p.stdout, p.stderr].filter((x): x is string => x !== null);
  });
}

/** One entry of the volume's layout (a path relative to the volume). */
export interface SyncLayoutEntry {
  path: string;
  type: 'directory' | 'fifo';
  mode: number;
}

/**
 * The volume's layout in creation order: pipes/ (0755) with the FIFOs (0666:
 * each container may run as any user), work/ (1777, as /tmp).
 */
export function syncVolumeLayout(): SyncLayoutEntry[] {
  return [
    { path: SYNC_PIPES_DIR, type: 'directory', mode: 0o755 },
    ...allSyncPipes().map((path): SyncLayoutEntry => ({ path, type: 'fifo', mode: 0o666 })),
    { path: SYNC_WORK_DIR, type: 'directory', mode: 0o1777 },
  ];
}

/** Where the wrapper writes the connector's exit (`{"code":…,"signal":…}`), by an atomic rename. */
export const syncExitFile = (role: SyncRole): string => `${SYNC_WORK_DIR}/${role}.exit`;
/** The wrapper's own 0700 directory for the files the runner sends (config, catalog, state). */
export const syncFilesDir = (role: SyncRole): string => `${SYNC_WORK_DIR}/${role}`;

/** The runner's first control line: the protocol arguments and the files they name, by name. */
export interface SyncStartMessage {
  /** Appended to the connector's command; `{files}` in an argument is replaced by the wrapper's files dir. */
  args: string[];
  /** name → content, written by the wrapper as 0600 files of the connector's user. */
  files: Record<string, string>;
}

/** The placeholder for the wrapper's files dir in SyncStartMessage.args. */
export const SYNC_FILES_PLACEHOLDER = '{files}';

export interface SyncConnectorExit {
  code: number | null;
  signal: string | null;
  /** Set when the wrapper could not run the connector at all (its command is missing, say). */
  error?: string;
}
