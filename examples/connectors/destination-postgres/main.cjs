#!/usr/bin/env node
// destination-postgres: an example destination. Each stream goes into the
// table <schema>.<table_prefix><stream> (_pk text primary key, data jsonb,
// emitted_at), upserted by the stream's primary key, so a record delivered
// twice is stored once. Records between two states are one transaction; a
// STATE is echoed only after that transaction has committed. Every record
// received is also appended to <table_prefix>_sluice_deliveries (outside the
// data transaction), so a test can see what a retry delivered again.
//
//   node main.cjs spec
//   node main.cjs check --config config.json
//   node main.cjs write --config config.json --catalog catalog.json  < messages
'use strict';
const { Client } = require('pg');
const { ConfigError, log, out, readJson, run, stdinLines } = require('../lib/protocol.cjs');

const connectionSpecification = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'PostgreSQL destination (example)',
  type: 'object',
  required: ['url'],
  properties: {
    url: { type: 'string', description: 'postgres://user:password@host:port/database' },
    schema: { type: 'string', default: 'public' },
    table_prefix: { type: 'string', default: '', pattern: '^[a-z0-9_]*$' },
    batch_size: { type: 'integer', minimum: 1, default: 1000, description: 'Rows per INSERT statement.' },
    fail_after_records: {
      type: 'integer',
      minimum: 1,
      description: 'Test knob: exit 1 right after receiving this many records, without committing them.',
    },
    fail_times: {
      type: 'integer',
      minimum: 1,
      description:
        'Test knob: inject that failure in this many write runs only (counted in the database); default every run.',
    },
    delay_ms_per_record: {
      type: 'number',
      minimum: 0,
      default: 0,
      description: 'Test knob: a slow destination, sleeping this long per record received.',
    },
  },
};

function loadConfig(path) {
  const c = readJson(path, 'config');
  if (typeof c !== 'object' || c === null || Array.isArray(c))
    throw new ConfigError('the config must be an object');
  const problems = [];
  if (typeof c.url !== 'string' || !/^postgres(ql)?:\/\//.test(c.url))
    problems.push('url must be a postgres:// URL');
  const schema = c.schema ?? 'public';
  if (typeof schema !== 'string' || schema === '') problems.push('schema must be a non-empty string');
  const prefix = c.table_prefix ?? '';
  if (typeof prefix !== 'string' || !/^[a-z0-9_]*$/.test(prefix))
    problems.push('table_prefix must match [a-z0-9_]*');
  const positive = (key) => {
    const v = c[key];
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1))
      problems.push(`${key} must be an integer >= 1`);
    return v;
  };
  const delay = c.delay_ms_per_record ?? 0;
  if (typeof delay !== 'number' || !(delay >= 0)) problems.push('delay_ms_per_record must be a number >= 0');
  const config = {
    url: c.url,
    schema,
    prefix,
    batchSize: positive('batch_size') ?? 1000,
    failAfterRecords: positive('fail_after_records'),
    failTimes: positive('fail_times'),
    delayMsPerRecord: delay,
  };
  if (problems.length > 0) throw new ConfigError(`invalid config: ${problems.join('; ')}`);
  return config;
}

const ident = (name) => `"${String(name).replace(/"/g, '""')}"`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function connect(url) {
  const client = new Client({ connectionString: url, application_name: 'destination-postgres' });
  await client.connect();
  return client;
}

/** stream name → { table, pk: paths, overwrite }, from the configured catalog. */
function streamsOf(config, catalog) {
  if (!Array.isArray(catalog?.streams)) throw new ConfigError('the catalog has no streams list');
  const streams = new Map();
  for (const configured of catalog.streams) {
    const name = configured?.stream?.name;
    if (typeof name !== 'string' || !/^[A-Za-z0-9_]+$/.test(name)) {
      throw new ConfigError(
        `stream name ${JSON.stringify(name)}: only letters, digits and _ make a table name here`,
      );
    }
    const pk = configured.primary_key ?? configured.stream.source_defined_primary_key;
    if (!Array.isArray(pk) || pk.length === 0)
      throw new ConfigError(`stream ${name} has no primary key to upsert by`);
    streams.set(name, {
      table: `${ident(config.schema)}.${ident(config.prefix + name)}`,
      pk,
      overwrite: configured.destination_sync_mode === 'overwrite',
      rows: new Map(), // _pk → [data, emitted_at], deduplicated within a batch
    });
  }
  return streams;
}

async function setUp(db, config, streams) {
  const deliveries = `${ident(config.schema)}.${ident(config.prefix + '_sluice_deliveries')}`;
  const runs = `${ident(config.schema)}.${ident(config.prefix + '_sluice_runs')}`;
  await db.query('BEGIN');
  // Two destinations starting at once would race on CREATE ... IF NOT EXISTS.
  await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
    `destination-postgres ${config.schema} ${config.prefix}`,
  ]);
  await db.query(`CREATE SCHEMA IF NOT EXISTS ${ident(config.schema)}`);
  for (const s of streams.values()) {
    await db.query(
      `CREATE TABLE IF NOT EXISTS ${s.table} (_pk text PRIMARY KEY, data jsonb NOT NULL, emitted_at bigint NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now())`,
    );
  }
  await db.query(
    `CREATE TABLE IF NOT EXISTS ${runs} (id bigserial PRIMARY KEY, started_at timestamptz NOT NULL DEFAULT now(),
      injected_failure boolean NOT NULL DEFAULT false)`,
  );
  await db.query(
    `CREATE TABLE IF NOT EXISTS ${deliveries} (id bigserial PRIMARY KEY, run_id bigint NOT NULL, stream text NOT NULL,
      pk text NOT NULL, emitted_at bigint NOT NULL, received_at timestamptz NOT NULL DEFAULT now())`,
  );
  const failed = await db.query(`SELECT count(*)::int AS n FROM ${runs} WHERE injected_failure`);
  const run = await db.query(`INSERT INTO ${runs} DEFAULT VALUES RETURNING id`);
  await db.query('COMMIT');
  const injectFailure =
    config.failAfterRecords !== undefined &&
    (config.failTimes === undefined || failed.rows[0].n < config.failTimes);
  return { deliveries, runs, runId: run.rows[0].id, injectFailure };
}

function keyOf(data, pk, stream) {
  const values = pk.map((path) => path.reduce((v, field) => (v == null ? undefined : v[field]), data));
  if (values.some((v) => v === undefined))
    throw new Error(`a ${stream} record has no value for its primary key`);
  return JSON.stringify(values);
}

async function write(args) {
  const config = loadConfig(args.config);
  const streams = streamsOf(config, readJson(args.catalog, 'catalog'));
  const db = await connect(config.url);
  const logDb = await connect(config.url);
  const run = await setUp(db, config, streams);
  let received = 0;
  let pendingRows = 0;
  let owedDelay = 0;
  let deliveryLog = []; // [stream, pk, emitted_at] not yet in the deliveries table

  const flushLog = async () => {
    if (deliveryLog.length === 0) return;
    const rows = deliveryLog;
    deliveryLog = [];
    await logDb.query(
      `INSERT INTO ${run.deliveries} (run_id, stream, pk, emitted_at)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[])`,
      [run.runId, rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
    );
  };
  const flushRows = async () => {
    await flushLog();
    for (const s of streams.values()) {
      if (s.rows.size === 0) continue;
      const keys = [...s.rows.keys()];
      const values = [...s.rows.values()];
      s.rows.clear();
      await db.query(
        `INSERT INTO ${s.table} (_pk, data, emitted_at)
         SELECT * FROM unnest($1::text[], $2::jsonb[], $3::bigint[])
         ON CONFLICT (_pk) DO UPDATE SET data = EXCLUDED.data, emitted_at = EXCLUDED.emitted_at, written_at = now()`,
        [keys, values.map((v) => v[0]), values.map((v) => v[1])],
      );
    }
    pendingRows = 0;
    if (owedDelay >= 1) {
      const ms = Math.floor(owedDelay);
      owedDelay -= ms;
      await sleep(ms);
    }
  };

  await db.query('BEGIN');
  for (const s of streams.values()) if (s.overwrite) await db.query(`TRUNCATE ${s.table}`);
  for await (const line of stdinLines()) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      continue; // not a protocol message
    }
    if (message?.type === 'RECORD') {
      const { stream, data, emitted_at: emittedAt } = message.record ?? {};
      const s = streams.get(stream);
      if (!s) throw new Error(`a record of stream ${JSON.stringify(stream)}, which is not in the catalog`);
      const pk = keyOf(data, s.pk, stream);
      s.rows.delete(pk); // the last delivery of a key in a batch wins
      s.rows.set(pk, [JSON.stringify(data), emittedAt]);
      deliveryLog.push([stream, pk, emittedAt]);
      received++;
      owedDelay += config.delayMsPerRecord;
      if (run.injectFailure && received >= config.failAfterRecords) {
        await flushLog(); // the log shows what this run received; the data transaction is never committed
        await logDb.query(`UPDATE ${run.runs} SET injected_failure = true WHERE id = $1`, [run.runId]);
        throw new Error(`injected failure after ${received} records (fail_after_records)`);
      }
      if (++pendingRows >= config.batchSize) await flushRows();
    } else if (message?.type === 'STATE') {
      await flushRows();
      await db.query('COMMIT');
      // Echoed as received, only now that everything before it is durable.
      const wait = out.line(line);
      if (wait) await wait;
      await out.flush();
      await db.query('BEGIN');
    }
  }
  await flushRows();
  await db.query('COMMIT');
  await log('INFO', `wrote ${received} records`);
  await db.end();
  await logDb.end();
}

run({
  async spec() {
    await out.send({
      type: 'SPEC',
      spec: {
        connectionSpecification,
        supported_destination_sync_modes: ['append', 'overwrite', 'append_dedup'],
      },
    });
  },

  async check(args) {
    let client;
    try {
      const config = loadConfig(args.config);
      client = await connect(config.url);
      await client.query('SELECT 1');
    } catch (err) {
      return out.send({
        type: 'CONNECTION_STATUS',
        connectionStatus: { status: 'FAILED', message: err.message },
      });
    } finally {
      await client?.end().catch(() => undefined);
    }
    await out.send({ type: 'CONNECTION_STATUS', connectionStatus: { status: 'SUCCEEDED' } });
  },

  write,
});
