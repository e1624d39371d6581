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
    const config = readJson(args.config, 'config');
    readJson(args.catalog, 'catalog');
    // Test knob: a slow destination, sleeping this long per line received (in steps of at least 1 ms).
    const delay = Number(config?.delay_ms_per_record ?? 0);
    let owed = 0;
    for await (const line of stdinLines()) {
      if (delay > 0 && (owed += delay) >= 1) {
        const ms = Math.floor(owed);
        owed -= ms;
        await new Promise((resolve) => setTimeout(resolve, ms));
      }
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
