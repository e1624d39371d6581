#!/usr/bin/env node
// destination-null: an example destination that stores nothing. It reads
// every line, drops the records and echoes each STATE as received: the
// cheapest destination, for measuring what a sync costs without one.
//
//   node main.cjs spec
//   node main.cjs check --config config.json
//   node main.cjs write --config config.json --catalog catalog.json  < messages
'use strict';
const { out, readJson, run, stdinLines } = require('../lib/protocol.cjs');

run({
  async spec() {
    await out.send({
      type: 'SPEC',
      spec: {
        connectionSpecification: { type: 'object', properties: {} },
        supported_destination_sync_modes: ['append', 'overwrite', 'append_dedup'],
      },
    });
  },

  async check() {
    await out.send({ type: 'CONNECTION_STATUS', connectionStatus: { status: 'SUCCEEDED' } });
  },

  async write(args) {
    readJson(args.config, 'config');
    readJson(args.catalog, 'catalog');
    for await (const line of stdinLines()) {
      // Only lines that may be a state are parsed: records pass untouched.
      if (!line.includes('"STATE"')) continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      if (message?.type !== 'STATE') continue;
      const wait = out.line(line);
      if (wait) await wait;
      await out.flush();
    }
  },
});
