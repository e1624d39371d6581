#!/usr/bin/env node
/**
 * Builds the self-contained runner (Node's single executable application), so
 * a task can run in any Linux image, one with no Node.js or even no libc
 * (see docs/architecture.md#the-runner-binary):
 *
 *   dist/sea/sluice   node + the bundled runner (SEA blob with code cache)
 *   dist/sea/lib/     ld-linux-x86-64.so.2 and the libraries node links
 *
 * Start it as `dist/sea/lib/ld-linux-x86-64.so.2 --library-path dist/sea/lib
 * dist/sea/sluice exec` with NODE_OPTIONS empty (a SEA honours NODE_OPTIONS).
 */
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const appDir = path.resolve(__dirname, '..');
const outDir = path.join(appDir, 'dist', 'sea');
const workDir = path.join(appDir, 'dist', 'sea-build');
const LOADER = 'ld-linux-x86-64.so.2';
// The SEA fuse every Node 20 binary carries; postject flips it.
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

function run(cmd, args, options = {}) {
  // Output is kept quiet (strip warns about Node's notes); a failure's error carries stderr.
  return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...options });
}

/**
 * Bundles from the TypeScript sources (the `source` condition of @sluice/*),
 * not from dist: as ES modules, zod and our packages are tree-shaken and
 * scope-hoisted, which starts ≈30% faster than the CommonJS dist bundle.
 * Scope-hoisted, main.ts's `require.main === module` refers to the SEA's own
 * main module, so main.ts starts itself as it does under plain node.
 */
function bundle(bundlePath) {
  require('esbuild').buildSync({
    entryPoints: [path.join(appDir, 'src', 'main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    conditions: ['source'],
    // main.ts loads the runner through @sluice/runner/bundled (a bundle with a
    // code cache, for plain Node); the SEA imports it statically instead.
    alias: { '@sluice/runner/bundled': path.join(appDir, 'src', 'sea-runner.ts') },
    outfile: bundlePath,
    logLevel: 'warning',
    legalComments: 'none',
  });
}

/** The libraries the dynamic loader resolves for `binary`, by ldd (name → host path). */
function linkedLibraries(binary) {
  const libs = new Map();
  for (const line of run('ldd', [binary]).split('\n')) {
    const match = /^\s*(\S+)\s+=>\s+(\/\S+)/.exec(line);
    if (match) libs.set(match[1], match[2]);
  }
  return libs;
}

function build() {
  const started = Date.now();
  fs.rmSync(workDir, { recursive: true, force: true });
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(workDir, { recursive: true });
  fs.mkdirSync(path.join(outDir, 'lib'), { recursive: true });

  const bundlePath = path.join(workDir, 'runner.cjs');
  bundle(bundlePath);

  const blobPath = path.join(workDir, 'sea.blob');
  const configPath = path.join(workDir, 'sea-config.json');
  fs.writeFileSync(
    configPath,
    JSON.stringify({
      main: bundlePath,
      output: blobPath,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
    }),
  );
  run(process.execPath, ['--experimental-sea-config', configPath], {
    env: { ...process.env, NODE_OPTIONS: '' },
  });

  const binary = path.join(outDir, 'sluice');
  fs.copyFileSync(process.execPath, binary);
  fs.chmodSync(binary, 0o755);
  run('strip', [binary]);
  const postject = require.resolve('postject/dist/cli.js', { paths: [appDir] });
  run(process.execPath, [postject, binary, 'NODE_SEA_BLOB', blobPath, '--sentinel-fuse', SEA_FUSE]);

  // The loader and every library node links, so the binary runs where the image has none of them.
  for (const [name, hostPath] of linkedLibraries(process.execPath)) {
    fs.copyFileSync(fs.realpathSync(hostPath), path.join(outDir, 'lib', name));
  }
  fs.copyFileSync(fs.realpathSync(`/lib64/${LOADER}`), path.join(outDir, 'lib', LOADER));
  for (const name of fs.readdirSync(path.join(outDir, 'lib')))
    fs.chmodSync(path.join(outDir, 'lib', name), 0o755);

  fs.rmSync(workDir, { recursive: true, force: true });
  const size = fs.statSync(binary).size;
  console.log(
    `build-sea: ${path.relative(process.cwd(), outDir)} (${(size / 1e6).toFixed(0)} MB) in ${Date.now() - started} ms`,
  );
}

build();
