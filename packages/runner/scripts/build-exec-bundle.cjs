#!/usr/bin/env node
/**
 * Writes the runner as one bundle plus V8's code cache for it (see
 * src/bundled.ts for why): dist/exec/runner.cjs and runner.cjs.cache.
 * Run after tsc (the package's build does both). The cache is made by this
 * Node.js; a runner started by another build of Node.js simply compiles
 * without it.
 */
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const packageDir = path.resolve(__dirname, '..');
const outDir = path.join(packageDir, 'dist', 'exec');
const bundlePath = path.join(outDir, 'runner.cjs');
const cachePath = `${bundlePath}.cache`;

fs.rmSync(outDir, { recursive: true, force: true });
// From the TypeScript sources (the `source` condition of @sluice/*): as ES
// modules, zod and our packages are tree-shaken and scope-hoisted.
require('esbuild').buildSync({
  entryPoints: [path.join(packageDir, 'src', 'index.ts')],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  conditions: ['source'],
  outfile: bundlePath,
  logLevel: 'warning',
  legalComments: 'none',
});

// The cache is taken in a fresh process after the bundle's top level has run,
// so it holds what a runner compiles while loading, in the form V8 of this
// Node.js accepts. runBundle and loadRunner are the runner's own loader (dist).
const loader = path.join(packageDir, 'dist', 'bundled.js');
const makeCache = `
const { runBundle } = require(${JSON.stringify(loader)});
const { exports, script } = runBundle(${JSON.stringify(bundlePath)});
if (typeof exports.runExecCommand !== 'function') throw new Error('the bundle does not export runExecCommand');
require('node:fs').writeFileSync(${JSON.stringify(cachePath)}, script.createCachedData());
`;
execFileSync(process.execPath, ['-e', makeCache], {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { PATH: process.env.PATH ?? '' },
});
const { runner, from } = require(loader).loadRunner(outDir);
if (from !== 'bundle+cache' || typeof runner.runExecCommand !== 'function') {
  throw new Error(`build-exec-bundle: the runner loaded from ${from}, not from its bundle and cache`);
}
const kb = (p) => `${Math.round(fs.statSync(p).size / 1024)} KB`;
process.stdout.write(
  `runner bundle: ${path.relative(packageDir, bundlePath)} (${kb(bundlePath)}, code cache ${kb(cachePath)})\n`,
);
