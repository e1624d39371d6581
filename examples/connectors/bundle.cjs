#!/usr/bin/env node
// node bundle.cjs OUT_DIR: destination-postgres and its `pg` in one file,
// OUT_DIR/destination-postgres.cjs, so its image needs no node_modules.
// esbuild is the runner app's build tool; it is loaded from there.
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');

const outDir = process.argv[2];
if (!outDir) {
  process.stderr.write('usage: node bundle.cjs OUT_DIR\n');
  process.exit(2);
}
const repo = path.resolve(__dirname, '..', '..');
const esbuild = createRequire(path.join(repo, 'apps', 'runner', 'package.json'))('esbuild');
esbuild.buildSync({
  entryPoints: [path.join(__dirname, 'destination-postgres', 'main.cjs')],
  bundle: true,
  platform: 'node',
  target: 'node20',
  external: ['pg-native'],
  outfile: path.join(path.resolve(outDir), 'destination-postgres.cjs'),
  logLevel: 'warning',
});
