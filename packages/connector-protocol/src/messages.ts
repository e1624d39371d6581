import { z } from 'zod';

/**
 * The connector protocol (Airbyte protocol v0): one JSON message per line,
 * tagged by `type`. Every object is loose: fields this version does not know
 * are kept as they came, never rejected, so a connector newer than Sluice
 * still works and what a connector sent is passed on unchanged.
 */

/** Any JSON object, kept as is (not copied: records and state blobs can be large). */
export type JsonObject = Record<string, unknown>;
export const JsonObject = z.custom<JsonObject>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  { message: 'expected object' },
);

export const SyncMode = z.enum(['full_refresh', 'incremental']);
export type SyncMode = z.infer<typeof SyncMode>;

export const DestinationSyncMode = z.enum(['append', 'overwrite', 'append_dedup']);
export type DestinationSyncMode = z.infer<typeof DestinationSyncMode>;

/**
 * An optional string field. `null` is accepted as "absent": serializers in
 * several connector SDKs write unset fields as null.
 */
const OptionalString = z.string().nullish();

/** A path into a record: `["address", "city"]`. */
const FieldPath = z.array(z.string());

export const StreamDescriptor = z.looseObject({ name: z.string(), namespace: OptionalString });
export type StreamDescriptor = z.infer<typeof StreamDescriptor>;

export const RecordMessage = z.looseObject({
  type: z.literal('RECORD'),
  record: z.looseObject({
    stream: z.string(),
    namespace: OptionalString,
    data: JsonObject,
    /** Epoch milliseconds. */
    emitted_at: z.number(),
  }),
});
export type RecordMessage = z.infer<typeof RecordMessage>;

export const StreamState = z.looseObject({
  stream_descriptor: StreamDescriptor,
  stream_state: JsonObject.optional(),
});
export type StreamState = z.infer<typeof StreamState>;

const StreamStateBody = z.looseObject({ type: z.literal('STREAM'), stream: StreamState });
const GlobalStateBody = z.looseObject({
  type: z.literal('GLOBAL'),
  global: z.looseObject({ shared_state: JsonObject.optional(), stream_states: z.array(StreamState) }),
});
/** The first state format: one blob for the whole connection. A state without `type` is one. */
const LegacyStateBody = z.looseObject({ type: z.literal('LEGACY').optional(), data: JsonObject });

export const AirbyteState = z.discriminatedUnion('type', [StreamStateBody, GlobalStateBody, LegacyStateBody]);
export type AirbyteState = z.infer<typeof AirbyteState>;
export type StreamStateBody = z.infer<typeof StreamStateBody>;
export type GlobalStateBody = z.infer<typeof GlobalStateBody>;
export type LegacyStateBody = z.infer<typeof LegacyStateBody>;
export type StateType = 'STREAM' | 'GLOBAL' | 'LEGACY';

/** The state's type, LEGACY when it has none (the protocol's rule). */
export function stateType(state: AirbyteState): StateType {
  return state.type ?? 'LEGACY';
}

export const StateMessage = z.looseObject({ type: z.literal('STATE'), state: AirbyteState });
export type StateMessage = z.infer<typeof StateMessage>;

export const LogLevel = z.enum(['FATAL', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE']);
export type LogLevel = z.infer<typeof LogLevel>;

export const LogMessage = z.looseObject({
  type: z.literal('LOG'),
  log: z.looseObject({ level: LogLevel, message: z.string(), stack_trace: OptionalString }),
});
export type LogMessage = z.infer<typeof LogMessage>;

export const ConnectorSpecification = z.looseObject({
  connectionSpecification: JsonObject,
  documentationUrl: z.string().optional(),
  changelogUrl: z.string().optional(),
  supportsIncremental: z.boolean().optional(),
  supported_destination_sync_modes: z.array(DestinationSyncMode).optional(),
  protocol_version: z.string().optional(),
});
export type ConnectorSpecification = z.infer<typeof ConnectorSpecification>;

export const SpecMessage = z.looseObject({ type: z.literal('SPEC'), spec: ConnectorSpecification });
export type SpecMessage = z.infer<typeof SpecMessage>;

export const ConnectionStatus = z.looseObject({
  status: z.enum(['SUCCEEDED', 'FAILED']),
  message: OptionalString,
});
export type ConnectionStatus = z.infer<typeof ConnectionStatus>;

export const ConnectionStatusMessage = z.looseObject({
  type: z.literal('CONNECTION_STATUS'),
  connectionStatus: ConnectionStatus,
});
export type ConnectionStatusMessage = z.infer<typeof ConnectionStatusMessage>;

export const AirbyteStream = z.looseObject({
  name: z.string(),
  json_schema: JsonObject,
  supported_sync_modes: z.array(SyncMode).min(1),
  source_defined_cursor: z.boolean().optional(),
  default_cursor_field: FieldPath.optional(),
  source_defined_primary_key: z.array(FieldPath).optional(),
  namespace: OptionalString,
});
export type AirbyteStream = z.infer<typeof AirbyteStream>;

export const AirbyteCatalog = z.looseObject({ streams: z.array(AirbyteStream) });
export type AirbyteCatalog = z.infer<typeof AirbyteCatalog>;

export const CatalogMessage = z.looseObject({ type: z.literal('CATALOG'), catalog: AirbyteCatalog });
export type CatalogMessage = z.infer<typeof CatalogMessage>;

export const ConfiguredAirbyteStream = z.looseObject({
  stream: AirbyteStream,
  sync_mode: SyncMode,
  destination_sync_mode: DestinationSyncMode,
  cursor_field: FieldPath.optional(),
  primary_key: z.array(FieldPath).optional(),
});
export type ConfiguredAirbyteStream = z.infer<typeof ConfiguredAirbyteStream>;

export const ConfiguredAirbyteCatalog = z.looseObject({ streams: z.array(ConfiguredAirbyteStream) });
export type ConfiguredAirbyteCatalog = z.infer<typeof ConfiguredAirbyteCatalog>;

export const ErrorTrace = z.looseObject({
  message: z.string(),
  internal_message: OptionalString,
  stack_trace: OptionalString,
  /** Open set: system_error and config_error today, more in newer protocol versions. */
  failure_type: OptionalString,
  stream_descriptor: StreamDescriptor.optional(),
});
export type ErrorTrace = z.infer<typeof ErrorTrace>;

export const TraceMessage = z.looseObject({
  type: z.literal('TRACE'),
  trace: z.looseObject({
    type: z.enum(['ERROR', 'ESTIMATE', 'STREAM_STATUS', 'ANALYTICS']),
    emitted_at: z.number(),
    error: ErrorTrace.optional(),
    estimate: JsonObject.optional(),
    stream_status: JsonObject.optional(),
    analytics: JsonObject.optional(),
  }),
});
export type TraceMessage = z.infer<typeof TraceMessage>;

export const ControlMessage = z.looseObject({
  type: z.literal('CONTROL'),
  control: z.looseObject({
    type: z.literal('CONNECTOR_CONFIG'),
    emitted_at: z.number(),
    connectorConfig: z.looseObject({ config: JsonObject }),
  }),
});
export type ControlMessage = z.infer<typeof ControlMessage>;

/** Every message type this version knows, by its `type`. */
export const MESSAGE_SCHEMAS = {
  RECORD: RecordMessage,
  STATE: StateMessage,
  LOG: LogMessage,
  SPEC: SpecMessage,
  CONNECTION_STATUS: ConnectionStatusMessage,
  CATALOG: CatalogMessage,
  TRACE: TraceMessage,
  CONTROL: ControlMessage,
} as const;
export type MessageType = keyof typeof MESSAGE_SCHEMAS;
export const MESSAGE_TYPES = Object.keys(MESSAGE_SCHEMAS) as MessageType[];

export const ConnectorMessage = z.discriminatedUnion('type', [
  RecordMessage,
  StateMessage,
  LogMessage,
  SpecMessage,
  ConnectionStatusMessage,
  CatalogMessage,
  TraceMessage,
  ControlMessage,
]);
export type ConnectorMessage = z.infer<typeof ConnectorMessage>;

export function isMessageType(type: string): type is MessageType {
  return Object.prototype.hasOwnProperty.call(MESSAGE_SCHEMAS, type);
}
