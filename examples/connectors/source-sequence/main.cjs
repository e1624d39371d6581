#!/usr/bin/env node
// source-sequence: an example source. Each configured stream holds the
// records id = 1..records_per_stream; the cursor is `id`, so an incremental
// read resumes after the last id of the state it is given. Raising
// records_per_stream between syncs "adds" records for the next sync.
//
//   node main.cjs spec
//   node main.cjs check    --config config.json
//   node main.cjs discover --config config.json
//   node main.cjs read     --config config.json --catalog catalog.json [--state state.json]
'use strict';
const { ConfigError, log, out, readJson, run } = require('../lib/protocol.cjs');

const connectionSpecification = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Sequence source',
  type: 'object',
  required: ['records_per_stream'],
  properties: {
    streams: {
      type: 'array',
      items: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,40}$' },
      minItems: 1,
      default: ['numbers'],
      description: 'Stream names.',
    },
    records_per_stream: { type: 'integer', minimum: 0, description: 'Records in each stream (ids 1..n).' },
    record_size_bytes: {
      type: 'integer',
      minimum: 0,
      maximum: 67108864,
      default: 200,
      description:
        'How long each RECORD line is in bytes, without its newline (padded with a payload field).',
    },
    state_every: {
      type: 'integer',
      minimum: 1,
      default: 1000,
      description: 'A STATE after every this many records of a stream, and one at its end.',
    },
  },
};

const NAME = /^[a-z_][a-z0-9_]{0,40}$/;

function loadConfig(path) {
  const c = readJson(path, 'config');
  const problems = [];
  if (typeof c !== 'object' || c === null || Array.isArray(c))
    throw new ConfigError('the config must be an object');
  const streams = c.streams ?? ['numbers'];
  if (!Array.isArray(streams) || streams.length === 0) problems.push('streams must be a non-empty array');
  else
    for (const s of streams) {
      if (typeof s !== 'string' || !NAME.test(s))
        problems.push(`stream name ${JSON.stringify(s)} must match ${NAME}`);
    }
  const int = (key, min, fallback) => {
    const v = c[key] ?? fallback;
    if (!Number.isSafeInteger(v) || v < min) problems.push(`${key} must be an integer >= ${min}`);
    return v;
  };
  const config = {
    streams,
    recordsPerStream: int('records_per_stream', 0, undefined),
    recordSizeBytes: int('record_size_bytes', 0, 200),
    stateEvery: int('state_every', 1, 1000),
  };
  if (problems.length > 0) throw new ConfigError(`invalid config: ${problems.join('; ')}`);
  return config;
}

function streamOf(name) {
  return {
    name,
    json_schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { id: { type: 'integer' }, payload: { type: 'string' } },
    },
    supported_sync_modes: ['full_refresh', 'incremental'],
    source_defined_cursor: true,
    default_cursor_field: ['id'],
    source_defined_primary_key: [['id']],
  };
}

/** stream name → last id delivered, from a --state file (a list of STREAM states). */
function cursorsFrom(path) {
  const cursors = new Map();
  if (!path) return cursors;
  const state = readJson(path, 'state');
  if (!Array.isArray(state)) throw new ConfigError('the state must be a list of STREAM states');
  for (const s of state) {
    const name = s?.stream?.stream_descriptor?.name;
    const cursor = s?.stream?.stream_state?.cursor;
    if (s?.type !== 'STREAM' || typeof name !== 'string' || !Number.isSafeInteger(cursor)) {
      throw new ConfigError(`not a state of this source: ${JSON.stringify(s)}`);
    }
    cursors.set(name, cursor);
  }
  return cursors;
}

async function readStream(config, name, start) {
  const { recordsPerStream: last, stateEvery } = config;
  const streamJson = JSON.stringify(name);
  const line = (id, payload, at) =>
    `{"type":"RECORD","record":{"stream":${streamJson},"emitted_at":${at},"data":{"id":${id},"payload":"${payload}"}}}`;
  // Padding to the configured size, per number of digits of the id (the line's only varying length).
  const paddings = [];
  const padding = (id) => {
    const digits = String(id).length;
    return (paddings[digits] ??= 'x'.repeat(
      Math.max(0, config.recordSizeBytes - line(id, '', Date.now()).length),
    ));
  };
  const state = (cursor) =>
    out.send({
      type: 'STATE',
      state: { type: 'STREAM', stream: { stream_descriptor: { name }, stream_state: { cursor } } },
    });
  await log('INFO', `reading ${name} from id ${start + 1} to ${last}`);
  let at = Date.now();
  for (let id = start + 1; id <= last; id++) {
    if ((id & 1023) === 0) at = Date.now();
    const wait = out.line(line(id, padding(id), at));
    if (wait) await wait;
    if ((id - start) % stateEvery === 0 && id !== last) {
      const w = state(id);
      if (w) await w;
    }
  }
  // The stream's last state, also when it had nothing new: it says "done up to here".
  await state(Math.max(start, last));
}

run({
  async spec() {
    await out.send({
      type: 'SPEC',
      spec: {
        connectionSpecification,
        supportsIncremental: true,
      },
    });
  },

  async check(args) {
    try {
      loadConfig(args.config);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return out.send({
        type: 'CONNECTION_STATUS',
        connectionStatus: { status: 'FAILED', message: err.message },
      });
    }
    await out.send({ type: 'CONNECTION_STATUS', connectionStatus: { status: 'SUCCEEDED' } });
  },

  async discover(args) {
    const config = loadConfig(args.config);
    await out.send({ type: 'CATALOG', catalog: { streams: config.streams.map(streamOf) } });
  },

  async read(args) {
    const config = loadConfig(args.config);
    const catalog = readJson(args.catalog, 'catalog');
    const cursors = cursorsFrom(args.state);
    if (!Array.isArray(catalog?.streams)) throw new ConfigError('the catalog has no streams list');
    for (const configured of catalog.streams) {
      const name = configured?.stream?.name;
      if (!config.streams.includes(name))
        throw new ConfigError(`the catalog's stream ${JSON.stringify(name)} is not in this source`);
      const start = configured.sync_mode === 'incremental' ? (cursors.get(name) ?? 0) : 0;
      await readStream(config, name, start);
    }
  },
});
