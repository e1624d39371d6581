import type {
  AirbyteCatalog,
  AirbyteStream,
  ConfiguredAirbyteCatalog,
  ConfiguredAirbyteStream,
  DestinationSyncMode,
  SyncMode,
} from './messages';

/** What a user picked for one stream of a discovered catalog. */
export interface StreamSelection {
  name: string;
  namespace?: string;
  syncMode: SyncMode;
  destinationSyncMode: DestinationSyncMode;
  /** Needed for incremental unless the source defines the cursor (then it must match or be left out). */
  cursorField?: string[];
  /** Needed for append_dedup unless the source defines the key (then it must match or be left out). */
  primaryKey?: string[][];
}

export interface CatalogSelectionError {
  /** The stream's name (`namespace.name` when it has a namespace). */
  stream: string;
  /** The selection's field that is wrong: name, syncMode, destinationSyncMode, cursorField, primaryKey. */
  field: string;
  message: string;
}

export type ConfiguredCatalogResult =
  { ok: true; catalog: ConfiguredAirbyteCatalog } | { ok: false; errors: CatalogSelectionError[] };

export interface ConfigureOptions {
  /** The destination's spec.supported_destination_sync_modes, when it lists them. */
  destinationSyncModes?: readonly DestinationSyncMode[];
}

/**
 * The discovered catalog → the configured catalog a `read` and a `write`
 * take. Every problem is reported (not only the first), each naming its
 * stream and field, so a user can fix a selection in one go.
 */
export function configureCatalog(
  catalog: AirbyteCatalog,
  selections: readonly StreamSelection[],
  options: ConfigureOptions = {},
): ConfiguredCatalogResult {
  const errors: CatalogSelectionError[] = [];
  const byKey = new Map(catalog.streams.map((s) => [lookupKey(s.name, s.namespace), s]));
  const seen = new Set<string>();
  const streams: ConfiguredAirbyteStream[] = [];
  if (selections.length === 0) {
    errors.push({ stream: '', field: 'streams', message: 'no stream is selected' });
  }
  for (const selection of selections) {
    const key = lookupKey(selection.name, selection.namespace);
    const shown = streamKey(selection.name, selection.namespace);
    const fail = (field: string, message: string) => errors.push({ stream: shown, field, message });
    if (seen.has(key)) {
      fail('name', 'the stream is selected twice');
      continue;
    }
    seen.add(key);
    const stream = byKey.get(key);
    if (!stream) {
      fail('name', 'the stream is not in the discovered catalog');
      continue;
    }
    const before = errors.length;
    const configured = configureStream(stream, selection, options, fail);
    if (errors.length === before) streams.push(configured);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, catalog: { streams } };
}

function configureStream(
  stream: AirbyteStream,
  selection: StreamSelection,
  options: ConfigureOptions,
  fail: (field: string, message: string) => void,
): ConfiguredAirbyteStream {
  const { syncMode, destinationSyncMode } = selection;
  if (!stream.supported_sync_modes.includes(syncMode)) {
    fail(
      'syncMode',
      `${syncMode} is not supported (the stream supports ${stream.supported_sync_modes.join(', ')})`,
    );
  }
  if (options.destinationSyncModes && !options.destinationSyncModes.includes(destinationSyncMode)) {
    fail(
      'destinationSyncMode',
      `${destinationSyncMode} is not supported by the destination (it supports ${options.destinationSyncModes.join(', ') || 'none'})`,
    );
  }
  if (syncMode === 'incremental' && destinationSyncMode === 'overwrite') {
    // Each incremental sync would replace the table with only the new records.
    fail('destinationSyncMode', 'overwrite cannot be combined with incremental (use append or append_dedup)');
  }
  const configured: ConfiguredAirbyteStream = {
    stream,
    sync_mode: syncMode,
    destination_sync_mode: destinationSyncMode,
  };

  const cursor = chooseCursor(stream, selection, fail);
  if (cursor) configured.cursor_field = cursor;
  const key = choosePrimaryKey(stream, selection, fail);
  if (key) configured.primary_key = key;
  return configured;
}

function chooseCursor(
  stream: AirbyteStream,
  selection: StreamSelection,
  fail: (field: string, message: string) => void,
): string[] | undefined {
  const given = selection.cursorField;
  const defined = stream.default_cursor_field;
  if (stream.source_defined_cursor) {
    if (given && defined && !samePath(given, defined)) {
      fail(
        'cursorField',
        `the source defines the cursor (${show(defined)}); ${show(given)} cannot replace it`,
      );
    }
    return defined && defined.length > 0 ? defined : given;
  }
  const cursor = given ?? defined;
  if (selection.syncMode !== 'incremental') return given;
  if (!cursor || cursor.length === 0) {
    fail('cursorField', 'incremental needs a cursor field and the source defines none');
    return undefined;
  }
  if (!schemaHasPath(stream.json_schema, cursor)) {
    fail('cursorField', `${show(cursor)} is not in the stream's json_schema`);
  }
  return cursor;
}

function choosePrimaryKey(
  stream: AirbyteStream,
  selection: StreamSelection,
  fail: (field: string, message: string) => void,
): string[][] | undefined {
  const given = selection.primaryKey;
  const defined = stream.source_defined_primary_key;
  if (defined && defined.length > 0) {
    if (given && !samePaths(given, defined)) {
      fail(
        'primaryKey',
        `the source defines the primary key (${defined.map(show).join(', ')}); it cannot be replaced`,
      );
    }
    return defined;
  }
  if (!given || given.length === 0) {
    if (selection.destinationSyncMode === 'append_dedup') {
      fail('primaryKey', 'append_dedup needs a primary key and the source defines none');
    }
    return undefined;
  }
  for (const path of given) {
    if (path.length === 0) fail('primaryKey', 'a primary key path is empty');
    else if (!schemaHasPath(stream.json_schema, path)) {
      fail('primaryKey', `${show(path)} is not in the stream's json_schema`);
    }
  }
  return given;
}

/** Whether a JSON schema declares the nested property path (through `properties`). */
export function schemaHasPath(schema: Record<string, unknown>, path: readonly string[]): boolean {
  let node: unknown = schema;
  for (const name of path) {
    const properties = (node as { properties?: unknown } | null)?.properties;
    if (typeof properties !== 'object' || properties === null) return false;
    if (!Object.prototype.hasOwnProperty.call(properties, name)) return false;
    node = (properties as Record<string, unknown>)[name];
  }
  return path.length > 0;
}

/** A stream as people read it: `namespace.name`, or `name`. */
export function streamKey(name: string, namespace?: string | null): string {
  return namespace ? `${namespace}.${name}` : name;
}

/** Unambiguous even when names contain dots. */
function lookupKey(name: string, namespace?: string | null): string {
  return `${namespace ?? ''}\u0000${name}`;
}

function samePath(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function samePaths(a: readonly string[][], b: readonly string[][]): boolean {
  return a.length === b.length && a.every((p, i) => samePath(p, b[i] ?? []));
}

function show(path: readonly string[]): string {
  return JSON.stringify(path);
}
